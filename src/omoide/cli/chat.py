"""`omoide chat` (the terminal UI), `omoide chats`, `omoide branches` and
`omoide search`: opening a chat and finding your way in your chats."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer
from rich.text import Text

from omoide.cli.common import run, stdout
from omoide.safe_text import highlighted, oneline, safe

if TYPE_CHECKING:
    from omoide.chat.runtime import Workspace

app = typer.Typer()
out = stdout()


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


def _highlight(marked: str) -> Text:
    """Only the match shown bold; brackets in the text stay as typed, never markup."""
    from omoide.store.rows import MATCH_END, MATCH_START

    return highlighted(marked, MATCH_START, MATCH_END)


@app.command()
def branches(
    character: Annotated[str, typer.Argument(help="Character id or name.")],
    chat_id: Annotated[int | None, typer.Option("--chat", help="Which chat (default: the most recent).")] = None,
) -> None:
    """List a chat's saved branches: name, when saved, last message, messages since the fork."""
    from rich.table import Table

    from omoide.chat.navigator import Navigator
    from omoide.cli.nothing_yet import no_chat_yet
    from omoide.chat.runtime import Workspace

    async def go() -> None:
        workspace = await Workspace.open()
        try:
            char = workspace.character(character)
            chat = await workspace.store.chats.get(chat_id) if chat_id else await workspace.store.chats.latest(char.id)
            if chat is None:
                raise no_chat_yet(char)
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

    from omoide.chat.navigator import where_in_chat
    from omoide.chat.runtime import Workspace

    async def go() -> None:
        workspace = await Workspace.open()
        try:
            char = workspace.character(character)
            hits = await workspace.store.messages.search(text, character=char.id, limit=limit)
            memo_hits = await workspace.store.memos.search(text, character=char.id, limit=limit)
            where = [await where_in_chat(workspace.store, hit.message) for hit in hits]
            you = workspace.settings.user.name
        finally:
            await workspace.aclose()
        if not hits and not memo_hits:
            out.print(safe(f"Nothing found for '{text}' in chats with {char.display_name}."))
            return
        table = Table("chat", "message", "when", "who", "match", title=safe(f"'{text}' with {char.display_name}"))
        for hit, place in zip(hits, where):
            who = char.display_name if hit.message.role == "assistant" else you
            snippet = _highlight(hit.marked)
            table.add_row(str(hit.message.chat_id), safe(f"#{hit.message.id}" + (f"\n{place}" if place else "")),
                          f"{hit.message.created_at.astimezone():%Y-%m-%d %H:%M}", safe(who), snippet)
        for memo_hit in memo_hits:
            memo = memo_hit.memo
            table.add_row(str(memo.chat_id), f"memo {memo.span}", f"{memo.updated_at.astimezone():%Y-%m-%d %H:%M}", "memo book", _highlight(memo_hit.marked))
        out.print(table)

    run(go)


