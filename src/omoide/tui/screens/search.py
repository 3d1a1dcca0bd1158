"""Search results: pick one to jump to it in the transcript."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static

from omoide.safe_text import inert
from omoide.tui.widgets.text import plain


class SearchScreen(ModalScreen[int | None]):
    """Rows are (message id, when, who, where, snippet); dismisses with a message id.
    'where' says whether a hit is on this path or on which saved branch."""

    DEFAULT_CSS = """
    SearchScreen { align: center middle; }
    SearchScreen > Vertical { width: 95%; height: 80%; border: round $accent; background: $surface; padding: 1 2; }
    SearchScreen .hint { color: $text-muted; }
    """
    BINDINGS = [Binding("escape", "close", "Close", id="search.close")]

    def __init__(self, query: str, rows: list[tuple[int, str, str, str, str]]) -> None:
        super().__init__()
        self.query_text = query
        self.rows = rows

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(inert(f"Search: {self.query_text} ({len(self.rows)} found, newest first)"), markup=False)
            yield DataTable(id="results", cursor_type="row")
            yield Static("Enter jumps to the message · Esc closes", classes="hint")

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns("#", "when", "who", "where", "match")
        for message_id, when, who, where, snippet in self.rows:
            table.add_row(*plain(f"#{message_id}", when, who, where, snippet))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        # By position: a memo and a message can lead to the same message.
        self.dismiss(self.rows[event.cursor_row][0])

    def action_close(self) -> None:
        self.dismiss(None)
