"""`omoide export` and `omoide import-chat`: chats in and out, as SillyTavern
JSONL, Markdown, or omoide's whole tree."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from omoide import locations
from omoide.cli.common import fail, run, stderr, stdout
from omoide.errors import OmoideError
from omoide.safe_text import inert, safe

if TYPE_CHECKING:
    from omoide.chat.runtime import Workspace

app = typer.Typer()
out, err = stdout(), stderr()


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
    from omoide.cli.nothing_yet import no_chat_yet
    from omoide.chat.runtime import Workspace

    if format not in ("jsonl", "md", "tree"):
        fail(OmoideError(f"Unknown format '{format}'.", "Use --format jsonl, md or tree."))

    async def go() -> str:
        workspace = await Workspace.open()
        try:
            char = workspace.character(character)
            # The newest chat the character is in: its own, or a scene it is part of.
            chat = await workspace.store.chats.get(chat_id) if chat_id else next(
                (c for c in await workspace.store.chats.list() if char.id in c.participants), None)
            if chat is None:
                raise no_chat_yet(char)
            user = workspace.settings.user.name
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

        try:
            locations.write_private(Path(output), text, make_parents=False)
        except OSError as exc:
            fail(OmoideError(f"Cannot write {output}: {exc.strerror or exc}.", "Check that the folder exists and is writable."))
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
    file: Annotated[str, typer.Argument(help="A SillyTavern chat file (.jsonl), one-on-one or group.")],
    character: Annotated[list[str] | None, typer.Option(
        "--character", "-c", help="A character of the chat (id or name), or NAME=ID for one of its speakers (repeatable).")] = None,
    card: Annotated[list[Path] | None, typer.Option(
        "--card", help="A card to import with the chat, for a speaker not in your library yet (repeatable).")] = None,
) -> None:
    """Import a SillyTavern chat; swipes become alternatives you can switch between, and a
    group chat becomes a scene (each speaker matched to a character by name)."""
    from omoide.chat.runtime import Workspace
    from omoide.exchange.chat_import import import_tavern_chat

    async def go() -> str:
        workspace = await Workspace.open()
        try:
            return await import_tavern_chat(workspace.store, Path(file), characters=character or [], cards=card or [],
                                            find=workspace.character, library=workspace.library.called)
        finally:
            await workspace.aclose()

    out.print(safe(run(go)))


