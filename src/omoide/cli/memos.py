"""`omoide memos CHARACTER`: the memo book at a chat's head, as Markdown or JSON;
`--add TEXT` writes a memo, `--retry` fills the gaps. cli.py mounts the command
`memos_command(run)` makes, handing in its runner (so this never imports cli.py)."""

from __future__ import annotations

import json
import sys
from collections.abc import Awaitable, Callable
from typing import Annotated

import typer
from rich.console import Console

from omoide.errors import OmoideError
from omoide.safe_text import safe

err = Console(stderr=True)


Runner = Callable[[Callable[[], Awaitable[str]]], str]


def memos_command(run: Runner) -> Callable[..., None]:
    def memos(
        character: Annotated[str, typer.Argument(help="Character id or name.")],
        chat_id: Annotated[int | None, typer.Option("--chat", help="Which chat (default: the most recent).")] = None,
        as_json: Annotated[bool, typer.Option("--json", help="Print the memos as JSON, for scripts.")] = False,
        add: Annotated[str | None, typer.Option("--add", help="Write a memo at the chat's head (one highlight per line).")] = None,
        retry: Annotated[bool, typer.Option("--retry", help="Try the gaps again with the summarizer backend.")] = False,
    ) -> None:
        """Print the memo book: a memo of highlights for every batch of messages on the chat's path."""
        from omoide.exchange.memobook import book_markdown, gap_line, memo_json
        from omoide.memory.book import MemoBook
        from omoide.chat.runtime import Runtime, Workspace

        async def go() -> str:
            # Only --retry talks to a model; printing and --add open the store alone.
            workspace = await (Runtime.start() if retry else Workspace.open())
            try:
                char = workspace.character(character)
                chat = await workspace.store.chats.get(chat_id) if chat_id else await workspace.store.chats.latest(char.id)
                if chat is None or chat.character != char.id:
                    raise OmoideError(f"No chat with {char.display_name} yet." if chat is None else f"Chat #{chat.id} is with {chat.character}.",
                                      f"Start one with `omoide chat {char.id}`; `omoide chats` lists them.")
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
                    return json.dumps({"chat_id": chat.id, "memos": [memo_json(m) for m in pages]}, ensure_ascii=False, indent=1) + "\n"
                settings = workspace.settings
                empty = (
                    f"No memos yet: a memo is made for every batch of {settings.memo_batch} messages." if settings.memory_style in ("memos", "both") else
                    f"No memos: memory_style is '{settings.memory_style}'. Set memory_style = \"memos\" or \"both\" to have them made."
                )
                return book_markdown(pages, title=f"Memo book: {char.display_name}, '{chat.title}' (chat #{chat.id})", empty=empty)
            finally:
                await workspace.aclose()

        sys.stdout.write(run(go))

    return memos
