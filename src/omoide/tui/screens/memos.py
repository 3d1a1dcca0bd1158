"""The memo book: every memo on the current path, a table of contents to jump
through, correct and write in.

One row per memo, newest first (a DataTable renders only the rows in view, so
10,000 memos scroll as fast as ten); the memo under the cursor is shown in full
below. The book opens with the memos of the last `FIRST_READ` messages; in a
long chat the older ones follow in the background, in chunks. Enter dismisses
with the message to jump to; e, n, d and r change the book in place through
`MemoBook` and reload it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static

from omoide.domain.chat import Memo
from omoide.errors import OmoideError
from omoide.exchange.memobook import gap_line, when
from omoide.memory.book import MemoBook
from omoide.safe_text import oneline, safe
from omoide.tui.screens.text_edit import TextEditScreen

FIRST_READ = 2000
"""Messages whose memos the book shows at once (about 250 memos)."""
CHUNK = 500
PAINT_PAUSE = 0.02


def row_cells(memo: Memo) -> list[Text]:
    if memo.gap:
        author, text = "gap", gap_line(memo)
    else:
        author, text = memo.byline, " · ".join(memo.highlights)
    if memo.hidden:
        author += " (hidden)"
    return [Text(when(memo)), Text(memo.span), Text(author), Text(oneline(text))]


def detail(memo: Memo) -> Text:
    where = f"messages {memo.span}" if memo.first_id is not None else f"message #{memo.anchor_id}"
    head = f"{when(memo)} · {where} · {memo.byline}{' · hidden (d shows it again)' if memo.hidden else ''}\n"
    if memo.gap:
        return safe(head + gap_line(memo) + "  (r tries again)")
    return safe(head + "\n".join(f"• {h}" for h in memo.highlights))


class MemoEditor(TextEditScreen):
    """Write or edit a memo: one highlight per line."""

    DEFAULT_CSS = """
    MemoEditor { align: center middle; }
    MemoEditor > Vertical { width: 90%; max-width: 110; height: 16; border: round $accent; background: $surface; padding: 1 2; }
    MemoEditor TextArea { height: 1fr; }
    MemoEditor .hint { color: $text-muted; }
    """
    BINDINGS = [
        Binding("ctrl+s", "save", "Save", id="memo_editor.save", priority=True),
        Binding("escape", "cancel", "Cancel", id="memo_editor.cancel"),
    ]
    HINT = "One highlight per line · Ctrl+S saves · Esc cancels"
    TEXT_ID = "memo-text"


class MemoBookScreen(ModalScreen[int | None]):
    """Dismisses with the id of the message to jump to, or None."""

    DEFAULT_CSS = """
    MemoBookScreen { align: center middle; }
    MemoBookScreen > Vertical { width: 95%; height: 90%; border: round $accent; background: $surface; padding: 1 2; }
    MemoBookScreen DataTable { height: 1fr; }
    MemoBookScreen #memo-detail { height: auto; max-height: 8; margin-top: 1; }
    MemoBookScreen .hint { color: $text-muted; }
    """
    BINDINGS = [
        Binding("escape", "close", "Close", id="memos.close"),
        Binding("e", "edit", "Edit", id="memos.edit"),
        Binding("n", "new", "New memo", id="memos.new"),
        Binding("d", "hide", "Hide / show", id="memos.hide"),
        Binding("r", "retry", "Retry a gap", id="memos.retry"),
    ]

    def __init__(self, book: MemoBook, title: str, *, note: str = "") -> None:
        super().__init__()
        self.book = book
        self.title_text = title
        self.note = note
        self.memos: list[Memo] = []
        """Newest first, as the rows are."""
        self.complete = False

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(safe(self.title_text), id="memo-title")
            yield DataTable(id="memos", cursor_type="row")
            yield Static("", id="memo-detail", markup=False)
            yield Static("Enter jumps to the batch · e edits · n writes a memo here · d hides/shows · r retries a gap · Esc closes",
                         classes="hint")

    async def on_mount(self) -> None:
        table: DataTable[Text] = self.query_one(DataTable)
        table.add_columns("when", "messages", "by", "highlights")
        await self.reload()

    async def reload(self, keep: int | None = None) -> None:
        """Read the book again; the cursor goes to memo `keep` (default: the newest)."""
        recent, complete = await self.book.recent_pages(FIRST_READ)
        self.memos = recent[::-1]
        self.complete = complete
        table: DataTable[Text] = self.query_one(DataTable)
        table.clear()
        table.add_rows(row_cells(m) for m in self.memos)
        self._title()
        if not self.memos:
            self.query_one("#memo-detail", Static).update("No memos yet. n writes one at this point of the story.")
        else:
            index = next((i for i, m in enumerate(self.memos) if m.id == keep), 0)
            table.move_cursor(row=index)
            self._show(index)
        if not complete:
            self.call_after_refresh(self._load_older)  # the newest memos are painted first

    @work(exclusive=True, group="memo-pages", exit_on_error=False)
    async def _load_older(self) -> None:
        await asyncio.sleep(PAINT_PAUSE)
        everything = await self.book.pages()
        shown = {m.id for m in self.memos}
        older = [m for m in reversed(everything) if m.id not in shown]
        table: DataTable[Text] = self.query_one(DataTable)
        for start in range(0, len(older), CHUNK):
            chunk = older[start : start + CHUNK]
            self.memos.extend(chunk)
            table.add_rows(row_cells(m) for m in chunk)
            self._title()
            await asyncio.sleep(PAINT_PAUSE)  # let a frame and a keypress in between
        self.complete = True
        self._title()

    def _title(self) -> None:
        count = len(self.memos)
        gaps = sum(1 for m in self.memos if m.gap)
        summary = f"{count} memo{'s' if count != 1 else ''} on this path" + (f", {gaps} gap{'s' if gaps != 1 else ''}" if gaps else "")
        more = "" if self.complete else " (reading older ones…)"
        self.query_one("#memo-title", Static).update(safe(f"{self.title_text}: {summary}{more}, newest first{self.note}"))

    def _show(self, index: int) -> None:
        if 0 <= index < len(self.memos):
            self.query_one("#memo-detail", Static).update(detail(self.memos[index]))

    @property
    def current(self) -> Memo | None:
        index = self.query_one(DataTable).cursor_row
        return self.memos[index] if 0 <= index < len(self.memos) else None

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show(event.cursor_row)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        if 0 <= event.cursor_row < len(self.memos):
            self.dismiss(self.memos[event.cursor_row].jump_id)

    async def _change(self, change: Awaitable[Memo]) -> None:
        """Await a book change; a refusal (empty text, not a gap) becomes a notice."""
        try:
            memo = await change
        except OmoideError as exc:
            self.app.notify(f"{exc.message} {exc.hint}".strip(), severity="warning", title="Memo book")
            return
        if memo.gap:
            self.app.notify(gap_line(memo), severity="warning", title="Still a gap", timeout=6)
        await self.reload(keep=memo.id)

    def action_edit(self) -> None:
        memo = self.current
        if memo is None:
            return
        if memo.gap:
            self.app.notify("This is a gap: r tries to make its memo again.", timeout=4)
            return

        async def save(text: str | None) -> None:
            if text is not None:
                await self._change(self.book.edit(memo.id, text))

        self.app.push_screen(MemoEditor(f"Edit the memo for messages {memo.span} (the original is kept)", "\n".join(memo.highlights)), save)

    def action_new(self) -> None:
        async def save(text: str | None) -> None:
            if text is not None and text.strip():
                await self._change(self.book.write(text))

        self.app.push_screen(MemoEditor("A new memo at this point of the story: the character knows it from the next turn"), save)

    async def action_hide(self) -> None:
        memo = self.current
        if memo is not None:
            await self._change(self.book.set_hidden(memo.id, not memo.hidden))

    def action_retry(self) -> None:
        memo = self.current
        if memo is None or not memo.gap:
            self.app.notify("Only a gap (a memo that failed to be made) can be retried.", timeout=4)
            return
        self.app.notify(f"Making the memo for messages {memo.span} again…", timeout=3)
        self._retry(memo.id)

    @work(exclusive=True, group="memo-retry", exit_on_error=False)
    async def _retry(self, memo_id: int) -> None:
        await self._change(self.book.retry(memo_id))

    def action_close(self) -> None:
        self.dismiss(None)
