"""The chat list: pick, rename, archive, or start a chat with this character."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static

from omoide.domain.chat import Chat
from omoide.chat.navigator import Navigator
from omoide.safe_text import inert
from omoide.tui.screens.prompt_input import InputModal
from omoide.tui.widgets.text import plain


class ChatListScreen(ModalScreen[int | str | None]):
    """Dismisses with a chat id to open, "new" for a new chat, or None."""

    DEFAULT_CSS = """
    ChatListScreen { align: center middle; }
    ChatListScreen > Vertical { width: 90%; height: 80%; border: round $accent; background: $surface; padding: 1 2; }
    ChatListScreen .hint { color: $text-muted; }
    """
    BINDINGS = [
        Binding("enter", "open", "Open", id="chats.open"),
        Binding("r", "rename", "Rename", id="chats.rename"),
        Binding("a", "archive", "Archive/unarchive", id="chats.archive"),
        Binding("n", "new", "New chat", id="chats.new"),
        Binding("s", "toggle_archived", "Show archived", id="chats.show_archived"),
        Binding("escape", "close", "Close", id="chats.close"),
    ]

    def __init__(self, navigator: Navigator, character_name: str, current_id: int) -> None:
        super().__init__()
        self.navigator = navigator
        self.character_name = character_name
        self.current_id = current_id
        self.show_archived = False
        self.chats: list[Chat] = []

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(inert(f"Chats with {self.character_name}"), markup=False)
            yield DataTable(id="chats", cursor_type="row")
            yield Static("Enter open · r rename · a archive · n new · s show archived · Esc close", classes="hint")

    async def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns("", "title", "with", "messages", "updated", "")
        await self.refresh_rows()

    async def refresh_rows(self) -> None:
        table = self.query_one(DataTable)
        table.clear()
        self.chats = await self.navigator.chats(include_archived=self.show_archived)
        for chat in self.chats:
            table.add_row(
                *plain(
                    "●" if chat.id == self.current_id else "", chat.title or f"chat #{chat.id}", ", ".join(chat.participants),
                    str(chat.message_count),
                    f"{chat.updated_at.astimezone():%Y-%m-%d %H:%M}", "archived" if chat.archived else "",
                ),
                key=str(chat.id),
            )

    def _selected(self) -> Chat | None:
        table = self.query_one(DataTable)
        if not self.chats or table.cursor_row is None or table.cursor_row >= len(self.chats):
            return None
        return self.chats[table.cursor_row]

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self.action_open()

    def action_open(self) -> None:
        chat = self._selected()
        if chat is not None:
            self.dismiss(chat.id)

    def action_new(self) -> None:
        self.dismiss("new")

    def action_close(self) -> None:
        self.dismiss(None)

    async def action_toggle_archived(self) -> None:
        self.show_archived = not self.show_archived
        await self.refresh_rows()

    async def action_archive(self) -> None:
        chat = self._selected()
        if chat is None:
            return
        if chat.id == self.current_id and not chat.archived:
            self.notify("This is the chat you are in; open another one first.", severity="warning")
            return
        await self.navigator.archive(chat.id, not chat.archived)
        await self.refresh_rows()

    def action_rename(self) -> None:
        chat = self._selected()
        if chat is None:
            return

        async def rename(title: str | None) -> None:
            if title:
                await self.navigator.rename(chat.id, title)
                await self.refresh_rows()

        self.app.push_screen(InputModal("New title for this chat:", chat.title), rename)
