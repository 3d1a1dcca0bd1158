"""A modal that edits one piece of text: Ctrl+S returns it, Esc returns None.

The memo book and the world screen each subclass it with their own title
style, hint, size and binding ids (binding ids are what a keymap remaps)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static, TextArea

from omoide.safe_text import inert, safe
from omoide.tui.widgets.editor import Editor


class TextEditScreen(ModalScreen[str | None]):
    HINT = "Ctrl+S saves · Esc cancels"
    TEXT_ID = "edit-text"

    def __init__(self, title: str, text: str = "") -> None:
        super().__init__()
        self.title_text = title
        self.text = text

    def title_widget(self) -> Static:
        return Static(safe(self.title_text))

    def compose(self) -> ComposeResult:
        with Vertical():
            yield self.title_widget()
            yield Editor(self.text, id=self.TEXT_ID, soft_wrap=True)
            yield Static(self.HINT, classes="hint")

    def on_mount(self) -> None:
        self.query_one(TextArea).focus()

    def action_save(self) -> None:
        text = self.query_one(TextArea).text
        # The editor shows the text inert (tui/widgets/inert.py): unchanged, it is the original, raw bytes and all.
        self.dismiss(self.text if text == inert(self.text) else text)

    def action_cancel(self) -> None:
        self.dismiss(None)
