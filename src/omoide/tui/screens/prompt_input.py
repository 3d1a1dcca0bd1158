"""A one-line question in a modal (rename a chat, name a branch)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from omoide.tui.widgets.inert import InertInput

from omoide.safe_text import inert


class InputModal(ModalScreen[str | None]):
    DEFAULT_CSS = """
    InputModal { align: center middle; }
    InputModal > Vertical { width: 60; height: auto; border: round $accent; background: $surface; padding: 1 2; }
    """
    BINDINGS = [Binding("escape", "cancel", "Cancel", id="input.cancel")]

    def __init__(self, question: str, value: str = "") -> None:
        super().__init__()
        self.question = question
        self.value = value

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(inert(self.question), markup=False)
            yield InertInput(value=self.value, id="answer")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip() or None)

    def action_cancel(self) -> None:
        self.dismiss(None)
