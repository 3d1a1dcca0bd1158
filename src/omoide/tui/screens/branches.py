"""The branch picker: saved points in the story, to restore one."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static

from omoide.tui.widgets.text import plain


class BranchScreen(ModalScreen[str | None]):
    """Rows are (● when it is where the chat is now, name, saved, its last message,
    messages since the fork); dismisses with a name."""

    DEFAULT_CSS = """
    BranchScreen { align: center middle; }
    BranchScreen > Vertical { width: 90%; height: 70%; border: round $accent; background: $surface; padding: 1 2; }
    BranchScreen .hint { color: $text-muted; }
    """
    BINDINGS = [Binding("escape", "close", "Close", id="branches.close")]

    def __init__(self, rows: list[tuple[str, str, str, str, str]]) -> None:
        super().__init__()
        self.rows = rows

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static("Branches: Enter restores one (the current point is saved first)")
            yield DataTable(id="branches", cursor_type="row")
            yield Static("● the point the chat is at now · Esc close", classes="hint")

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns("", "name", "saved", "last message", "since fork")
        for row in self.rows:
            table.add_row(*plain(*row), key=row[1])

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self.dismiss(str(event.row_key.value))

    def action_close(self) -> None:
        self.dismiss(None)
