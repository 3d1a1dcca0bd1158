"""Editable widgets that echo only inert text: the one way untrusted text (a
reply, a card's greeting, a memo, an imported chat's message, a path, a name)
reaches a Textual `TextArea` or `Input`.

Textual draws the characters of an editor's document as they are, so an ESC
in it is written to the terminal: a title change, an OSC 52 clipboard write.
Here every text that enters the document (given at the start, loaded, typed
or pasted) goes through `safe_text.inert` first: controls show as their
pictures (ESC as ␛), as everywhere else on screen. What the editor returns is
what it showed, so what is saved is what was seen. Editors that compare the
result with the original compare with `inert(original)` (an unchanged text
is not a new version)."""

from __future__ import annotations

from typing import Any

from textual.document._edit import Edit
from textual.document._document import EditResult
from textual.widgets import Input, TextArea

from omoide.safe_text import inert


class InertTextArea(TextArea):
    """A TextArea whose document never holds a control character but newline and tab."""

    def __init__(self, text: str = "", **kwargs: Any) -> None:
        super().__init__(inert(text), **kwargs)

    def load_text(self, text: str) -> None:
        super().load_text(inert(text))

    def edit(self, edit: Edit) -> EditResult:
        """Every change of the document (typing, a paste, an insert) is made inert first."""
        edit.text = inert(edit.text)
        return super().edit(edit)


class InertInput(Input):
    """An Input whose value never holds a control character (a one-line field: newlines become spaces)."""

    def __init__(self, value: str | None = None, **kwargs: Any) -> None:
        super().__init__(value=None if value is None else one_line(value), **kwargs)

    def validate_value(self, value: str) -> str:
        return one_line(value)


def one_line(text: str) -> str:
    return inert(text).replace("\n", " ").replace("\t", " ")
