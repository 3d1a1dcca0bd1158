"""A modal that shows Markdown text: help, the summary, search results."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown, Static

from omoide.safe_text import inert
from omoide.tui.widgets.text import chat_markdown


class TextModal(ModalScreen[None]):
    DEFAULT_CSS = """
    TextModal { align: center middle; }
    TextModal > VerticalScroll { width: 90%; max-width: 110; height: 80%; border: round $accent; background: $surface; padding: 1 2; }
    TextModal .hint { color: $text-muted; margin-top: 1; }
    """
    BINDINGS = [Binding("escape,q", "dismiss", "Close", id="modal.close")]

    def __init__(self, title: str, markdown: str) -> None:
        super().__init__()
        self.title_text = title
        self.markdown = markdown

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Markdown(inert(f"# {self.title_text}\n\n{self.markdown}"), parser_factory=chat_markdown)
            yield Static("Esc to close", classes="hint")

    def action_dismiss(self) -> None:  # type: ignore[override]
        self.dismiss(None)
