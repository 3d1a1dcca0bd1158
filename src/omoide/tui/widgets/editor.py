"""A text area for the editors (memo, world, profile): inert (widgets/inert.py), with
Ctrl+Home and Ctrl+End going to the start and the end of the text, as in every
editor (Textual's TextArea binds neither, so they reached the chat behind and
scrolled it instead)."""

from __future__ import annotations

from textual.binding import Binding

from omoide.tui.widgets.inert import InertTextArea


class Editor(InertTextArea):
    BINDINGS = [
        Binding("ctrl+home", "document_start", "Start of the text", id="editor.start", show=False),
        Binding("ctrl+end", "document_end", "End of the text", id="editor.end", show=False),
        Binding("ctrl+shift+home", "document_start(True)", "Select to the start", id="editor.select_start", show=False),
        Binding("ctrl+shift+end", "document_end(True)", "Select to the end", id="editor.select_end", show=False),
    ]

    def action_document_start(self, select: bool = False) -> None:
        self.move_cursor((0, 0), select=select)

    def action_document_end(self, select: bool = False) -> None:
        self.move_cursor(self.document.end, select=select)
