"""The `omoide` command. Heavy imports (Textual, llama.cpp) happen inside the
commands that need them, so `omoide --help` is instant; `omoide chat` from the
command line does not even load the other command groups (`only_chat`)."""

from __future__ import annotations

import asyncio
import re
import sys
from pathlib import Path
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Annotated, NoReturn, TypeVar

import typer
from rich.console import Console
from rich.text import Text

from omoide import __version__, locations
from omoide.cli.output import fail
from omoide.errors import OmoideError
from omoide.safe_text import inert, oneline, safe
from omoide.cli.say import StreamedText as StreamedText  # re-exported: tests and scripts import it from here

if TYPE_CHECKING:
    from omoide.chat.runtime import Workspace

T = TypeVar("T")

app = typer.Typer(
    name="omoide",
    help="思い出 omoide: a terminal roleplay client whose characters remember.",
    no_args_is_help=False,
    invoke_without_command=True,
    add_completion=False,
    rich_markup_mode="rich",
)
out = Console()
err = Console(stderr=True)


def _fail(exc: OmoideError) -> NoReturn:
    fail(exc)


def run(coro_factory: Callable[[], Awaitable[T]]) -> T:
    from omoide.config.logs import setup_logging

    setup_logging()
    from omoide.config.settings import config_warnings

    for warning in config_warnings():
        err.print(safe(f"Warning: {warning}", "yellow"), soft_wrap=True)
    try:
        return asyncio.run(coro_factory())  # type: ignore[arg-type]
    except OmoideError as exc:
        _fail(exc)
        raise AssertionError("unreachable")
    except KeyboardInterrupt:
        err.print(Text("Interrupted. Whatever had arrived is kept.", style="dim"))
        raise typer.Exit(130)


@app.callback()
def _root(
    ctx: typer.Context,
    version: Annotated[bool, typer.Option("--version", help="Print the version and exit.")] = False,
) -> None:
    if version:
        out.print(f"omoide {__version__}")
        raise typer.Exit()
    if ctx.invoked_subcommand is None:
        out.print(ctx.get_help())


def only_chat() -> bool:
    """True when this process is `omoide chat ...` run from the command line: the
    other command groups, and all they import, are not needed (40 ms of start-up)."""
    return Path(sys.argv[0]).stem == "omoide" and sys.argv[1:2] == ["chat"]


def _mount_groups() -> None:
    from omoide.cli.memos import memos_command
    from omoide.cli.characters import app as characters_app
    from omoide.cli.models import app as models_app
    from omoide.cli.profile import app as profile_app
    from omoide.cli.say import register as register_say
    from omoide.cli.world import register

    app.add_typer(characters_app, name="characters", help="List, show, import and export characters.")
    app.command("memos")(memos_command(run))
    app.add_typer(profile_app, name="profile", help="Show and edit your profile: what every character knows about you.")
    app.add_typer(models_app, name="models", help="List models, choose the default, download a GGUF.")
    register_say(app, run=run, fail=_fail)
    register(app, run=run, fail=_fail)
    from omoide.cli.memory_check import app as memory_app

    app.add_typer(memory_app, name="memory", help="Measure what the characters remember (omoide memory check).")


@app.command()
def chat(
    character: Annotated[str | None, typer.Argument(help="Character id or name (default: the most recent chat's).")] = None,
    others: Annotated[list[str] | None, typer.Argument(help="More characters: opens a group scene with all of them.")] = None,
    new: Annotated[bool, typer.Option("--new", help="Start a new chat instead of reopening the most recent.")] = False,
    chat_id: Annotated[int | None, typer.Option("--chat", help="Open this chat (see `omoide chats`).")] = None,
    branch: Annotated[str | None, typer.Option("--branch", help="Open the chat at this saved branch.")] = None,
) -> None:
    """Chat with a character in the terminal UI; name more to open a group scene
    (`omoide chat suzune wren`)."""
    from omoide.chat.runtime import Runtime

    async def go() -> None:
        runtime = await Runtime.start()
        try:
            name = character or await _most_recent_character(runtime)
            cast = [runtime.character(o) for o in others or []]
            session = await runtime.session(runtime.character(name), chat_id=chat_id, new=new, others=cast)
            if branch:
                await session.tree.restore_branch(branch)
            from omoide.tui import run_chat_async

            await run_chat_async(session)
        finally:
            await runtime.aclose()

    run(go)


async def _most_recent_character(workspace: Workspace) -> str | None:
    chats = await workspace.store.chats.list()
    return chats[0].character if chats else None


@app.command()
def chats(
    character: Annotated[str | None, typer.Argument(help="Only this character's chats.")] = None,
    archived: Annotated[bool, typer.Option("--archived", help="Include archived chats.")] = False,
) -> None:
    """List chats: id, character, title, messages on the current path, last update."""
    from rich.table import Table

    from omoide.chat.runtime import Workspace

    async def go() -> None:
        workspace = await Workspace.open()
        try:
            char_id = workspace.character(character).id if character else None
            rows = await workspace.store.chats.list(char_id, include_archived=archived)
        finally:
            await workspace.aclose()
        table = Table("id", "characters", "title", "messages", "updated", title="Chats")
        for c in rows:
            title = Text.assemble(safe(c.title), (" (archived)" if c.archived else "", "dim"))
            table.add_row(str(c.id), safe(", ".join(c.participants)), title, str(c.message_count), f"{c.updated_at.astimezone():%Y-%m-%d %H:%M}")
        out.print(table if rows else "No chats yet. Start one with `omoide chat`.")

    run(go)


def _memory_command(kind: str, character: str, chat_id: int | None) -> None:
    from rich.markdown import Markdown

    from omoide.memory.diary import render_diary
    from omoide.chat.runtime import Workspace

    async def go() -> None:
        workspace = await Workspace.open()
        try:
            char = workspace.character(character)
            chat = await workspace.store.chats.get(chat_id) if chat_id else await workspace.store.chats.latest(char.id)
            if chat is None or chat.head_id is None:
                out.print(safe(f"No chat with {char.display_name} yet."))
                return
            state = await workspace.store.memory.state(chat.head_id, diary_limit=10_000)
        finally:
            await workspace.aclose()
        if kind == "diary":
            text = render_diary(state.diary) if state.diary else f"*{char.display_name} has not written anything yet.*"
            out.print(Markdown(inert(f"# {char.display_name}'s diary\n\n{text}"), hyperlinks=False))
        else:
            text = state.summary.content if state.summary and state.summary.content else "*No summary yet: the chat is still short enough to be read whole.*"
            out.print(Markdown(inert(f"# The story so far with {char.display_name}\n\n{text}"), hyperlinks=False))

    run(go)


@app.command()
def diary(
    character: Annotated[str, typer.Argument(help="Character id or name.")],
    chat_id: Annotated[int | None, typer.Option("--chat", help="Which chat (default: the most recent).")] = None,
) -> None:
    """Print the character's diary as it stands at the chat's head, as Markdown."""
    _memory_command("diary", character, chat_id)


@app.command()
def summary(
    character: Annotated[str, typer.Argument(help="Character id or name.")],
    chat_id: Annotated[int | None, typer.Option("--chat", help="Which chat (default: the most recent).")] = None,
) -> None:
    """Print the summary in force at the chat's head, as Markdown."""
    _memory_command("summary", character, chat_id)


def _highlight(snippet: str) -> Text:
    """FTS marks matches as [word]; show them bold, and never read them as Rich markup."""
    text = Text()
    for i, part in enumerate(re.split(r"\[|\]", snippet)):
        text.append(inert(part), style="bold yellow" if i % 2 else "")
    return text


@app.command()
def branches(
    character: Annotated[str, typer.Argument(help="Character id or name.")],
    chat_id: Annotated[int | None, typer.Option("--chat", help="Which chat (default: the most recent).")] = None,
) -> None:
    """List a chat's saved branches: name, when saved, last message, messages since the fork."""
    from rich.table import Table

    from omoide.chat.navigator import Navigator
    from omoide.chat.runtime import Workspace

    async def go() -> None:
        workspace = await Workspace.open()
        try:
            char = workspace.character(character)
            chat = await workspace.store.chats.get(chat_id) if chat_id else await workspace.store.chats.latest(char.id)
            if chat is None:
                out.print(safe(f"No chat with {char.display_name} yet."))
                return
            table = Table("name", "saved", "last message", "since fork", title=safe(f"Branches of '{chat.title}' (chat #{chat.id})"))
            for row in await Navigator(workspace.store, chat).branches(chat.head_id):
                here = " (you are here)" if row.here else ""
                table.add_row(safe(row.branch.name + here), f"{row.branch.created_at.astimezone():%Y-%m-%d %H:%M}",
                              safe(oneline(row.opening, 80)), str(row.since_fork))
            out.print(table if table.row_count else f"No branches in chat #{chat.id}. In the chat, /branch save NAME saves one.")
        finally:
            await workspace.aclose()

    run(go)


@app.command()
def search(
    character: Annotated[str, typer.Argument(help="Character id or name.")],
    text: Annotated[str, typer.Argument(help="Words to look for (all must match).")],
    limit: Annotated[int, typer.Option(help="Most results to show.")] = 20,
) -> None:
    """Search every chat with a character, all branches included, newest first."""
    from rich.table import Table

    from omoide.chat.runtime import Workspace

    async def go() -> None:
        workspace = await Workspace.open()
        try:
            char = workspace.character(character)
            hits = await workspace.store.messages.search(text, character=char.id, limit=limit)
            memo_hits = await workspace.store.memos.search(text, character=char.id, limit=limit)
        finally:
            await workspace.aclose()
        if not hits and not memo_hits:
            out.print(safe(f"Nothing found for '{text}' in chats with {char.display_name}."))
            return
        table = Table("chat", "message", "when", "who", "match", title=safe(f"'{text}' with {char.display_name}"))
        for hit in hits:
            who = char.display_name if hit.message.role == "assistant" else "you"
            snippet = _highlight(hit.snippet)
            table.add_row(str(hit.message.chat_id), f"#{hit.message.id}", f"{hit.message.created_at.astimezone():%Y-%m-%d %H:%M}", safe(who), snippet)
        for memo_hit in memo_hits:
            memo = memo_hit.memo
            table.add_row(str(memo.chat_id), f"memo {memo.span}", f"{memo.updated_at.astimezone():%Y-%m-%d %H:%M}", "memo book", _highlight(memo_hit.snippet))
        out.print(table)

    run(go)


@app.command()
def export(
    character: Annotated[str, typer.Argument(help="Character id or name.")],
    format: Annotated[str, typer.Option("--format", "-f", help="jsonl (SillyTavern), md (Markdown) or tree (every branch, omoide JSON).")] = "jsonl",
    chat_id: Annotated[int | None, typer.Option("--chat", help="Which chat (default: the most recent).")] = None,
    output: Annotated[str | None, typer.Option("--output", "-o", help="File to write (default: standard output).")] = None,
) -> None:
    """Export a chat: the current path as SillyTavern JSONL or Markdown, or the whole tree."""
    from omoide.exchange import sillytavern as st
    from omoide.exchange.memobook import book_markdown, memo_json
    from omoide.chat.runtime import Workspace

    if format not in ("jsonl", "md", "tree"):
        _fail(OmoideError(f"Unknown format '{format}'.", "Use --format jsonl, md or tree."))

    async def go() -> str:
        workspace = await Workspace.open()
        try:
            char = workspace.character(character)
            # The newest chat the character is in: its own, or a scene it is part of.
            chat = await workspace.store.chats.get(chat_id) if chat_id else next(
                (c for c in await workspace.store.chats.list() if char.id in c.participants), None)
            if chat is None:
                raise OmoideError(f"No chat with {char.display_name} yet.", "Start one with `omoide chat`.")
            user = workspace.settings.user_name
            names = {key: _display_name(workspace, key) for key in chat.participants}
            host = names.get(chat.character, char.display_name)
            if format == "tree":
                messages = await workspace.store.messages.tree(chat.id)
                branches = [{"name": b.name, "message_id": b.message_id, "auto": b.auto} for b in await workspace.store.branches.list(chat.id)]
                memos = [memo_json(v) for v in await workspace.store.memos.history(chat.id)]  # every version, oldest first
                return st.write_tree(messages, head_id=chat.head_id, character=chat.character, title=chat.title,
                                     extra={"branches": branches, "memos": memos, "participants": list(chat.participants)})
            path = await workspace.store.messages.path(chat.head_id)
            meta = await workspace.store.exchange.messages(chat.id)
            if format == "md":
                text = st.write_markdown(path, user_name=user, character_name=host, title=chat.title, meta=meta, names=names)
                pages = await workspace.store.memos.on_path(chat.head_id)
                return text + ("\n" + book_markdown(pages, title="Memo book", empty="") if pages else "")
            swipes = {m.id: await workspace.store.messages.siblings(m) for m in path if m.role == "assistant"}
            return st.write_chat(path, swipes, user_name=user, character_name=host, created=chat.created_at,
                                 chat_meta=await workspace.store.exchange.chat(chat.id), meta=meta, names=names)
        finally:
            await workspace.aclose()

    text = run(go)
    if output:
        from pathlib import Path

        Path(output).write_text(text, encoding="utf-8")
        err.print(safe(f"Wrote {output}."))
    else:
        # JSON escapes control characters itself; Markdown is text for a terminal.
        sys.stdout.write(inert(text) if format == "md" else text)


def _display_name(workspace: Workspace, key: str) -> str:
    try:
        return workspace.character(key).display_name
    except OmoideError:
        return key


@app.command("import-chat")
def import_chat(
    file: Annotated[str, typer.Argument(help="A SillyTavern chat file (.jsonl).")],
    character: Annotated[str, typer.Option("--character", "-c", help="The character the chat is with.")],
) -> None:
    """Import a SillyTavern chat; swipes become alternatives you can switch between."""
    from pathlib import Path

    from omoide.exchange import sillytavern as st
    from omoide.chat.runtime import Workspace

    async def go() -> str:
        parsed = st.read_chat(Path(file))
        workspace = await Workspace.open()
        try:
            char = workspace.character(character)
            chat = await workspace.store.chats.import_tree(char.id, f"Imported from {Path(file).name}", parsed.nodes, parsed.head_index)
            ids = await workspace.store.exchange.message_ids(chat.id)
            kept = {"chat_metadata": parsed.header.get("chat_metadata"), "create_date": parsed.header.get("create_date")}
            await workspace.store.exchange.save(
                chat.id, {k: v for k, v in kept.items() if v is not None}, dict(zip(ids, parsed.meta, strict=True)),
            )
            return f"Imported {len(parsed.nodes)} messages into chat #{chat.id} with {char.display_name}. Open it with `omoide chat {char.id} --chat {chat.id}`."
        finally:
            await workspace.aclose()

    out.print(safe(run(go)))


@app.command()
def doctor() -> None:
    """Check the configuration, the database and the backend, and say what is wrong."""
    from omoide.cli.doctor import run_doctor

    ok = run(run_doctor)
    raise typer.Exit(0 if ok else 1)


@app.command()
def paths() -> None:
    """Show where omoide keeps its config, data and logs."""
    out.print(safe(f"config file: {locations.config_file()}"))
    out.print(safe(f"database:    {locations.database_file()}"))
    out.print(safe(f"characters:  {locations.user_characters_dir()}"))
    out.print(safe(f"log file:    {locations.log_file()}"))


if not only_chat():
    _mount_groups()


def main() -> None:
    app()


if __name__ == "__main__":
    main()
