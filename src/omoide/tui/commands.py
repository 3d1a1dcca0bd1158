"""What each slash command does in the TUI. Parsing lives in omoide.commands."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from omoide.commands import ParsedCommand, help_lines
from omoide.errors import OmoideError

if TYPE_CHECKING:
    from omoide.tui.app import OmoideApp

log = logging.getLogger(__name__)

Handler = Callable[["OmoideApp", ParsedCommand], Awaitable[None]]


async def dispatch(app: OmoideApp, command: ParsedCommand) -> None:
    handler = HANDLERS.get(command.name)
    if handler is None:
        # The hook for new commands: parsed (so listed in /help) before the TUI handles them.
        app.notify(f"/{command.name} is not available in the terminal UI yet.", severity="warning")
        return
    try:
        await handler(app, command)
    except OmoideError as exc:
        app.notify(f"{exc.message} {exc.hint}".strip(), severity="error", title=f"/{command.name}")
    except Exception as exc:  # a bug in one command must not close the chat
        log.exception("/%s failed", command.name)
        app.notify(f"Something went wrong: {exc!r}", severity="error", title=f"/{command.name}")


async def _help(app: OmoideApp, command: ParsedCommand) -> None:
    from omoide.tui.screens.text_modal import TextModal

    keys = "\n".join(f"| {key} | {what} |" for key, what in app.key_help())
    body = (
        "```\n" + "\n".join(help_lines()) + "\n```\n\n"
        + "| Key | Does |\n|---|---|\n" + keys
        + "\n\nStart a line with `//` to send text that begins with `/`."
    )
    app.push_screen(TextModal("Commands", body))


async def _diary(app: OmoideApp, command: ParsedCommand) -> None:
    await app.action_toggle_diary()


async def _summary(app: OmoideApp, command: ParsedCommand) -> None:
    from omoide.tui.screens.text_modal import TextModal

    memory = await app.session.memory()
    if memory.summary and memory.summary.content:
        covered = f"*Covers the story up to message #{memory.summary.covers_to_id}.*\n\n" if memory.summary.covers_to_id else ""
        body = covered + memory.summary.content
    else:
        body = "*No summary yet: the chat is still short enough to be sent whole.*"
    app.push_screen(TextModal("The story so far", body))


async def _remember(app: OmoideApp, command: ParsedCommand) -> None:
    entry = await app.session.remember(command.raw_args)
    await app.refresh_diary()
    if not app.diary.has_class("visible"):
        app.diary.add_class("visible")
    app.notify(f"Written in {app.session.character.display_name}'s diary: {entry.content}", timeout=4)


async def _prompt(app: OmoideApp, command: ParsedCommand) -> None:
    app.action_inspect_prompt()


def _busy(app: OmoideApp) -> bool:
    if app.turn_running:
        app.notify("A reply is still coming; press Esc to stop it first.", severity="warning")
        return True
    return False


async def _regen(app: OmoideApp, command: ParsedCommand) -> None:
    if _busy(app):
        return
    head = await app.session.head()
    if head is not None and head.role == "assistant" and head.parent_id is not None:
        await app.transcript.show_path(head.parent_id)
    app.run_turn(app.session.regenerate)


async def _edit(app: OmoideApp, command: ParsedCommand) -> None:
    if _busy(app):
        return
    path = await app.session.transcript(limit=3)
    last_user = next((m for m in reversed(path) if m.role == "user"), None)
    if last_user is None:
        app.notify("You have not written anything to edit yet.", severity="warning")
        return
    if not command.raw_args:
        app.query_one("#input").value = f"/edit {last_user.content}"  # type: ignore[attr-defined]
        app.notify("Change the text and press Enter.", timeout=3)
        return
    await app.transcript.show_path(last_user.parent_id)
    text = command.raw_args
    app.run_turn(lambda: app.session.edit_last(text))


async def _undo(app: OmoideApp, command: ParsedCommand) -> None:
    if _busy(app):
        return
    await app.session.undo()
    await app.show_chat()
    app.notify("Stepped back one exchange. Nothing was deleted: /branch or Ctrl+←/→ can bring it back.", timeout=4)


async def _branch(app: OmoideApp, command: ParsedCommand) -> None:
    args = command.args
    action = args[0].lower() if args else "list"
    names = [a for a in args[1:] if not a.startswith("--")]
    force = "--force" in args
    if action == "list":
        await open_branch_picker(app)
        return
    if action not in ("save", "restore", "delete") or not names:
        app.notify("Usage: /branch save NAME [--force] · /branch restore NAME · /branch list · /branch delete NAME", severity="warning")
        return
    name = names[0]
    if action == "save":
        branch = await app.session.save_branch(name, force=force)
        app.notify(f"Saved branch '{branch.name}'. /branch restore {branch.name} comes back here.", timeout=4)
    elif action == "restore":
        await restore(app, name)
    else:
        await app.session.delete_branch(name)
        app.notify(f"Deleted the branch name '{name}'. No message was deleted.", timeout=4)


async def restore(app: OmoideApp, name: str) -> None:
    await app.stop_turn_and_wait()  # the reply is kept, interrupted, on the old branch
    target, saved = await app.session.restore_branch(name)
    await app.show_chat()
    undo = f" The point you left is saved as '{saved.name}'." if saved else ""
    app.notify(f"Restored '{target.name}'.{undo}", timeout=6)


async def open_branch_picker(app: OmoideApp) -> None:
    from omoide.tui.screens.branches import BranchScreen

    branches = await app.session.branches()
    if not branches:
        app.notify("No branches yet. /branch save NAME saves this point in the story.", timeout=4)
        return
    head = (await app.session.refresh()).head_id
    rows = []
    for branch in branches:
        message = await app.store.messages.get(branch.message_id)
        fork = await app.store.messages.fork_point(branch.message_id, head) if head else None
        since = message.depth - fork.depth if fork else message.depth + 1
        opening = " ".join(message.content.split()[:8])
        rows.append((branch.name, f"{branch.created_at.astimezone():%m/%d %H:%M}", opening, f"{since} msgs"))

    async def chosen(name: str | None) -> None:
        if name:
            try:
                await restore(app, name)
            except OmoideError as exc:
                app.notify(f"{exc.message} {exc.hint}", severity="error")

    app.push_screen(BranchScreen(rows), chosen)


async def _chats(app: OmoideApp, command: ParsedCommand) -> None:
    app.action_chat_list()


async def _new(app: OmoideApp, command: ParsedCommand) -> None:
    await app.switch_chat(None)


async def _rename(app: OmoideApp, command: ParsedCommand) -> None:
    if not command.raw_args:
        app.notify("Usage: /rename TITLE", severity="warning")
        return
    await app.store.chats.rename(app.session.chat.id, command.raw_args)
    await app.show_chat()


async def _search(app: OmoideApp, command: ParsedCommand) -> None:
    from rich.text import Text

    from omoide.tui.screens.search import SearchScreen

    if not command.raw_args:
        app.notify("Usage: /search TEXT", severity="warning")
        return
    hits = await app.store.messages.search(command.raw_args, chat_id=app.session.chat.id, limit=100)
    if not hits:
        app.notify(f"Nothing found for '{command.raw_args}' in this chat.", timeout=4)
        return
    rows = []
    for hit in hits:
        who = app.session.character.display_name if hit.message.role == "assistant" else app.session.user_name
        rows.append((hit.message.id, f"{hit.message.created_at.astimezone():%Y-%m-%d %H:%M}", who, Text(hit.snippet).plain))

    async def chosen(message_id: int | None) -> None:
        if message_id is not None:
            await jump_to_message(app, message_id)

    app.push_screen(SearchScreen(command.raw_args, rows), chosen)


async def jump_to_message(app: OmoideApp, message_id: int) -> None:
    head = (await app.session.refresh()).head_id
    message = await app.store.messages.get(message_id)
    if head is None or message.chat_id != app.session.chat.id or not await app.store.messages.is_ancestor(message.id, head):
        app.notify(f"Message #{message_id} is on another branch of the story; restore or save a branch there first.",
                   severity="warning", title="Not on this branch")
        return
    await app.transcript.show_around(head, message)
    app.notify(f"Message #{message.id}, {message.created_at.astimezone():%Y-%m-%d %H:%M}. Ctrl+End goes back to the end.", timeout=4)


def parse_moment(text: str) -> str | None:
    """'2026-04-01', '2026-04-01 20:15' or '04/01' (this year) -> ISO in UTC, local time meant."""
    from datetime import UTC, datetime

    text = text.strip()
    for fmt in ("%Y-%m-%d %H:%M", "%Y-%m-%d", "%m/%d %H:%M", "%m/%d"):
        try:
            moment = datetime.strptime(text, fmt)
        except ValueError:
            continue
        if "%Y" not in fmt:
            moment = moment.replace(year=datetime.now().year)
        return moment.astimezone().astimezone(UTC).isoformat(timespec="microseconds")
    return None


async def _goto(app: OmoideApp, command: ParsedCommand) -> None:
    target = command.raw_args.strip()
    head = (await app.session.refresh()).head_id
    if not target or head is None:
        app.notify("Usage: /goto 2026-04-01, /goto 04/01 20:15 or /goto #1234", severity="warning")
        return
    if target.lstrip("#").isdigit():
        await jump_to_message(app, int(target.lstrip("#")))
        return
    else:
        moment = parse_moment(target)
        if moment is None:
            app.notify(f"'{target}' is not a date I can read. Try 2026-04-01, 04/01 or 04/01 20:15.", severity="warning")
            return
        message = await app.store.messages.first_on_path_since(head, moment)
        if message is None:
            app.notify(f"Nothing was written on or after {target} on this branch.", severity="warning")
            return
    await jump_to_message(app, message.id)


async def _persona(app: OmoideApp, command: ParsedCommand) -> None:
    if not command.raw_args:
        choices = app.session.personas()
        listing = ", ".join(f"{name}{' (current)' if name == app.session.user_name else ''}" for name in choices)
        app.notify(f"Personas: {listing}. /persona NAME switches.", timeout=6)
        return
    name, _ = await app.session.set_persona(command.raw_args)
    app.transcript.user_name = name
    app.notify(f"You are now {name} in this chat.", timeout=4)


async def _import(app: OmoideApp, command: ParsedCommand) -> None:
    from omoide.tui.screens.import_card import ImportCardScreen

    def done(character) -> None:  # type: ignore[no-untyped-def]
        if character is not None:
            app.notify(f"Imported {character.display_name} as '{character.id}'. Chat with them: omoide chat {character.id}", timeout=8)

    app.push_screen(ImportCardScreen(command.raw_args), done)


async def _quit(app: OmoideApp, command: ParsedCommand) -> None:
    app.exit()


HANDLERS: dict[str, Handler] = {
    "help": _help, "diary": _diary, "summary": _summary, "remember": _remember, "prompt": _prompt,
    "regen": _regen, "edit": _edit, "undo": _undo, "branch": _branch, "chats": _chats, "new": _new,
    "rename": _rename, "search": _search, "goto": _goto, "persona": _persona, "import": _import, "quit": _quit,
}
