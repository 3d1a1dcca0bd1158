"""`omoide diary`, `omoide summary` and `omoide memos`: what a character
remembers of a chat, tier by tier, as it stands at the chat's head."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from omoide.cli.common import run, stderr, stdout
from omoide.cli.nothing_yet import no_chat_yet
from omoide.errors import OmoideError
from omoide.safe_text import inert, markdown_literal, safe

app = typer.Typer()
out, err = stdout(), stderr()


def _memory_command(kind: str, character: str, chat_id: int | None) -> None:
    from omoide.memory.diary import render_diary
    from omoide.chat.runtime import Workspace

    async def go() -> tuple[str, str]:
        workspace = await Workspace.open()
        try:
            char = workspace.character(character)
            chat = await workspace.store.chats.get(chat_id) if chat_id else await workspace.store.chats.latest(char.id)
            if chat is None or chat.head_id is None:
                raise no_chat_yet(char)
            state = await workspace.store.memory.state(chat.head_id, diary_limit=10_000)
        finally:
            await workspace.aclose()
        if kind == "diary":
            name = markdown_literal(char.display_name)
            text = render_diary(state.diary) if state.diary else f"*{name} has not written anything yet.*"
            return f"{char.display_name}'s diary", text
        text = state.summary.content if state.summary and state.summary.content else "*No summary yet: the chat is still short enough to be read whole.*"
        return f"The story so far with {char.display_name}", text

    title, text = run(go)
    if not sys.stdout.isatty():
        # Raw Markdown, every character of the stored text, as `omoide memos` prints it.
        sys.stdout.write(inert(f"# {markdown_literal(title)}\n\n{text.strip()}\n"))
        return
    from omoide.cli.written import WrittenMarkdown

    out.print(safe(title, "bold"))
    out.print()
    out.print(WrittenMarkdown(inert(text), hyperlinks=False))


@app.command()
def diary(
    character: Annotated[str, typer.Argument(help="Character id or name.")],
    chat_id: Annotated[int | None, typer.Option("--chat", help="Which chat (default: the most recent).")] = None,
) -> None:
    """Print the character's diary as it stands at the chat's head: rendered on a terminal, raw Markdown when piped."""
    _memory_command("diary", character, chat_id)


@app.command()
def summary(
    character: Annotated[str, typer.Argument(help="Character id or name.")],
    chat_id: Annotated[int | None, typer.Option("--chat", help="Which chat (default: the most recent).")] = None,
) -> None:
    """Print the summary in force at the chat's head: rendered on a terminal, raw Markdown when piped."""
    _memory_command("summary", character, chat_id)


@app.command()
def memos(
    character: Annotated[str, typer.Argument(help="Character id or name.")],
    chat_id: Annotated[int | None, typer.Option("--chat", help="Which chat (default: the most recent).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the memos as JSON, for scripts.")] = False,
    add: Annotated[str | None, typer.Option("--add", help="Write a memo at the chat's head (one highlight per line).")] = None,
    retry: Annotated[bool, typer.Option("--retry", help="Try the gaps again with the summarizer backend.")] = False,
) -> None:
    """Print the memo book: a memo of highlights for every batch of messages on the chat's path."""
    from omoide.safe_text import json_text
    from omoide.exchange.memobook import book_markdown, gap_line, memo_json
    from omoide.memory.book import MemoBook
    from omoide.chat.runtime import Runtime, Workspace

    async def go() -> str:
        # Only --retry talks to a model; printing and --add open the store alone.
        workspace = await (Runtime.start() if retry else Workspace.open())
        try:
            char = workspace.character(character)
            chat = await workspace.store.chats.get(chat_id) if chat_id else await workspace.store.chats.latest(char.id)
            if chat is None:
                raise no_chat_yet(char)
            if chat.character != char.id:
                raise OmoideError(f"Chat #{chat.id} is with {chat.character}, not {char.display_name}.",
                                  f"`omoide chats {char.id}` lists {char.display_name}'s chats.")
            if isinstance(workspace, Runtime):
                book = (await workspace.session(char, chat_id=chat.id)).book
            else:
                book = MemoBook(workspace.store, chat.id)
            if add is not None:
                memo = await book.write(add)
                err.print(safe(f"Wrote a memo at message #{memo.anchor_id}; {char.display_name} knows it from the next turn."))
            if retry:
                for memo in await book.retry_gaps():
                    line = f"Still {gap_line(memo)}" if memo.gap else f"Filled the memo for messages {memo.span}."
                    err.print(safe(line))
            pages = await book.pages()
            if as_json:
                return json_text({"chat_id": chat.id, "memos": [memo_json(m) for m in pages]}, indent=1) + "\n"
            settings = workspace.settings
            empty = (
                f"No memos yet: a memo is made for every batch of {settings.memory.memo_batch} messages."
                if settings.memory.style in ("memos", "both") else
                f"No memos: memory_style is '{settings.memory.style}'. Set memory_style = \"memos\" or \"both\" to have them made."
            )
            return book_markdown(pages, title=f"Memo book: {char.display_name}, '{chat.title}' (chat #{chat.id})", empty=empty)
        finally:
            await workspace.aclose()

    sys.stdout.write(run(go))
