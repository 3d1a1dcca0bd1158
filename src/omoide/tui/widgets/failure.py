"""The mark a failed reply leaves under the message it should have answered:
what failed, and how to try again. It stays after the notice fades, and is
shown again when the chat is reopened (the failed reply's row keeps the error)."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from omoide.safe_text import inert


def failure_text(speaker: str, error: str, *, partial: bool) -> Text:
    who = inert(speaker)
    what = f"{who}'s reply was cut off" if partial else f"{who} did not answer"
    return Text.assemble(("✗ ", "bold red"), (f"{what}: ", "bold"), inert(error), (" · /regen tries again.", "italic"))


class FailureNote(Static):
    DEFAULT_CSS = """
    FailureNote { height: auto; margin: 0 0 1 0; padding: 0 1; color: $text-error; border-left: thick $error; }
    """

    def __init__(self, speaker: str, error: str, *, partial: bool = False) -> None:
        super().__init__(failure_text(speaker, error, partial=partial), id="failure-note", markup=False)
        self.error = error
