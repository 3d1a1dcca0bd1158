"""Import a character card (PNG or JSON) from inside the chat."""

from __future__ import annotations

from pathlib import Path

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from omoide.tui.widgets.inert import InertInput

from omoide.characters.cards import import_card
from omoide.characters.model import Character
from omoide.errors import OmoideError
from omoide.safe_text import inert


class ImportCardScreen(ModalScreen[Character | None]):
    """Asks for a card file, imports it, and dismisses with the new character."""

    DEFAULT_CSS = """
    ImportCardScreen { align: center middle; }
    ImportCardScreen > Vertical { width: 80; height: auto; border: round $accent; background: $surface; padding: 1 2; }
    ImportCardScreen #import-error { color: $error; height: auto; }
    ImportCardScreen .hint { color: $text-muted; }
    """
    BINDINGS = [Binding("escape", "cancel", "Cancel", id="import.cancel")]

    def __init__(self, path: str = "") -> None:
        super().__init__()
        self.initial = path

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static("Import a character card (Character Card V1/V2/V3, .png or .json):")
            yield InertInput(value=self.initial, placeholder="~/Downloads/character.png", id="card-path")
            yield Static("", id="import-error", markup=False)
            yield Static("Enter imports · Esc cancels", classes="hint")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        path = Path(event.value.strip()).expanduser()
        try:
            character = import_card(path)
        except OmoideError as exc:
            self.query_one("#import-error", Static).update(inert(f"{exc.message} {exc.hint}"))
            return
        self.dismiss(character)

    def action_cancel(self) -> None:
        self.dismiss(None)
