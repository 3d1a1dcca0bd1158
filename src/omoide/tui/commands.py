"""What the chat's own slash commands do in the TUI (help, diary, turns,
branches, chats, search, personas, import). Parsing lives in omoide.tui.command_line;
the handlers see the app only as a `Host`; `tui/slash.py` is the table that
names them."""

from __future__ import annotations

from omoide.characters.model import Character
from omoide.tui.command_line import ParsedCommand, parse_remember
from omoide.domain.chat import Message, Role
from omoide.errors import OmoideError
from omoide.tui.host import Host, report
from omoide.tui.memos import memo_rows


async def help_command(app: Host, command: ParsedCommand) -> None:
    from omoide.tui.screens.help import HelpScreen

    app.push_screen(HelpScreen(app.command_help(), app.key_help()))


async def diary_command(app: Host, command: ParsedCommand) -> None:
    await app.action_toggle_diary()


async def summary_command(app: Host, command: ParsedCommand) -> None:
    from omoide.tui.screens.text_modal import TextModal

    memory = await app.session.memory()
    if memory.summary and memory.summary.content:
        covered = ""
        if memory.summary.covers_to_id:
            # Its place on the path, as you count the messages, not the message's number in the database.
            place, head = memory.summary.covers_to_id, (await app.session.refresh()).head_id
            upto = await app.session.navigator.position(place)
            total = f" of the {await app.session.navigator.position(head)} on this path" if head is not None else ""
            covered = f"*Covers the story up to its {ordinal(upto)} message{total}.*\n\n"
        body = covered + memory.summary.content
    else:
        body = "*No summary yet: the chat is still short enough to be sent whole.*"
    app.push_screen(TextModal("The story so far", body))


async def remember_command(app: Host, command: ParsedCommand) -> None:
    importance, text = parse_remember(command.raw_args)
    entry = await app.session.user.remember(text, importance=importance)
    await app.show_diary()
    app.notify(f"Written in {app.session.character.display_name}'s diary: {entry.content}", timeout=4)


async def prompt_command(app: Host, command: ParsedCommand) -> None:
    app.action_inspect_prompt()


def _busy(app: Host) -> bool:
    if app.turn_running:
        app.notify("A reply is still coming; press Esc to stop it first.", severity="warning")
        return True
    return False


async def regen_command(app: Host, command: ParsedCommand) -> None:
    if _busy(app):
        return
    head = await app.session.head()
    if head is not None and head.role == "assistant" and head.parent_id is not None:
        await app.transcript.show_path(head.parent_id)
    app.run_turn(app.session.regenerate)


async def edit_command(app: Host, command: ParsedCommand) -> None:
    if _busy(app):
        return
    path = await app.session.transcript(limit=3)
    last_user = next((m for m in reversed(path) if m.role == "user"), None)
    if last_user is None:
        app.notify("You have not written anything to edit yet.", severity="warning")
        return
    if not command.raw_args:
        app.prefill(f"/edit {last_user.content}")
        app.notify("Change the text and press Enter.", timeout=3)
        return
    await app.transcript.show_path(last_user.parent_id)
    text = command.raw_args
    app.run_turn(lambda: app.session.edit_last(text))


async def undo_command(app: Host, command: ParsedCommand) -> None:
    if _busy(app):
        return
    _, kept = await app.session.tree.undo()
    await app.show_chat()
    app.notify(f"Stepped back one exchange. Nothing was deleted: /branch restore {kept.name} brings it back.", timeout=8)


async def branch_command(app: Host, command: ParsedCommand) -> None:
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
        branch = await app.session.tree.save_branch(name, force=force)
        app.notify(f"Saved branch '{branch.name}'. /branch restore {branch.name} comes back here.", timeout=4)
    elif action == "restore":
        await restore(app, name)
    else:
        await app.session.tree.delete_branch(name)
        app.notify(f"Deleted the branch name '{name}'. No message was deleted.", timeout=4)


async def restore(app: Host, name: str) -> None:
    await app.stop_turn_and_wait()  # the reply is kept, interrupted, on the old branch
    target, saved = await app.session.tree.restore_branch(name)
    await app.show_chat()
    undo = f" The point you left is saved as '{saved.name}'." if saved and saved.name != target.name else ""
    app.notify(f"Restored '{target.name}'.{undo}", timeout=6)


def ordinal(n: int) -> str:
    """1st, 2nd, 3rd, 4th ... 11th, 12th, 13th, 21st."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


HERE = "●"
"""Marks, in the branch picker, the branch the chat is at now."""


async def open_branch_picker(app: Host) -> None:
    from omoide.tui.screens.branches import BranchScreen

    branches = await app.session.navigator.branches((await app.session.refresh()).head_id)
    if not branches:
        app.notify("No branches yet. /branch save NAME saves this point in the story.", timeout=4)
        return

    def last(message: Message) -> str:
        """The branch's own last message: its place in its story, who wrote it, its first words."""
        if message.stage:
            who = "Stage"
        elif message.role is Role.USER:
            who = app.session.user.name
        else:
            who = app.transcript.speaker_names.get(message.speaker or "", app.transcript.speaker)
        return f"#{message.depth + 1} {who}: {' '.join(message.content.split()[:8])}"

    rows = [(HERE if b.here else "", b.branch.name, f"{b.branch.created_at.astimezone():%m/%d %H:%M}", last(b.message),
             f"{b.since_fork} msgs") for b in branches]

    async def chosen(name: str | None) -> None:
        if name:
            try:
                await restore(app, name)
            except OmoideError as exc:
                report(app, exc, "Branches")

    app.push_screen(BranchScreen(rows), chosen)


async def chats_command(app: Host, command: ParsedCommand) -> None:
    app.action_chat_list()


async def new_command(app: Host, command: ParsedCommand) -> None:
    await app.switch_chat(None)


async def rename_command(app: Host, command: ParsedCommand) -> None:
    if not command.raw_args:
        app.notify("Usage: /rename TITLE", severity="warning")
        return
    await app.session.navigator.rename(app.session.chat.id, command.raw_args)
    await app.show_chat()


async def search_command(app: Host, command: ParsedCommand) -> None:
    from rich.text import Text

    from omoide.tui.screens.search import SearchScreen

    if not command.raw_args:
        app.notify("Usage: /search TEXT", severity="warning")
        return
    hits = await app.session.navigator.search(command.raw_args, limit=100)
    head = (await app.session.refresh()).head_id
    rows = []
    for hit in hits:
        who = app.session.character.display_name if hit.message.role == "assistant" else app.session.user.name
        where = await app.session.navigator.where(hit.message, head)
        rows.append((hit.message.id, f"{hit.message.created_at.astimezone():%Y-%m-%d %H:%M}", who, where, Text(hit.snippet).plain))
    rows.extend(await memo_rows(app, command.raw_args))
    if not rows:
        app.notify(f"Nothing found for '{command.raw_args}' in this chat.", timeout=4)
        return

    async def chosen(message_id: int | None) -> None:
        if message_id is None:
            return
        try:
            head = (await app.session.refresh()).head_id
            if head is not None:
                await show_message(app, await app.session.navigator.locate(message_id, head))
        except OmoideError as exc:
            report(app, exc, "Search")

    app.push_screen(SearchScreen(command.raw_args, rows), chosen)


async def show_message(app: Host, message: Message) -> None:
    """Show the page of the path that holds `message` (found on it by the navigator)."""
    head = (await app.session.refresh()).head_id
    if head is None:
        return
    await app.transcript.show_around(head, message)
    app.notify(f"Message #{message.id}, {message.created_at.astimezone():%Y-%m-%d %H:%M}. Ctrl+End goes back to the end.", timeout=4)


async def goto_command(app: Host, command: ParsedCommand) -> None:
    head = (await app.session.refresh()).head_id
    await show_message(app, await app.session.navigator.goto(command.raw_args, head))


async def persona_command(app: Host, command: ParsedCommand) -> None:
    if not command.raw_args:
        choices = app.session.user.personas()
        listing = ", ".join(f"{name}{' (current)' if name == app.session.user.name else ''}" for name in choices)
        app.notify(f"Personas: {listing}. /persona NAME switches.", timeout=6)
        return
    name, _ = await app.session.user.set_persona(command.raw_args)
    app.transcript.user_name = name
    app.notify(f"You are now {name} in this chat.", timeout=4)


async def import_command(app: Host, command: ParsedCommand) -> None:
    from omoide.tui.screens.import_card import ImportCardScreen

    def done(character: Character | None) -> None:
        if character is not None:
            app.notify(f"Imported {character.display_name} as '{character.id}'. Chat with them: omoide chat {character.id}", timeout=8)

    app.push_screen(ImportCardScreen(command.raw_args), done)


async def quit_command(app: Host, command: ParsedCommand) -> None:
    app.exit()
