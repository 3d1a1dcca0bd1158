"""The box you type into: Enter sends, a newline key (Shift+Enter where the
terminal tells it from Enter; Ctrl+J and Alt+Enter everywhere) starts a new
line, and the box grows with its lines (a few, then it scrolls).

Up and Down in an empty box, or one showing an earlier message unchanged,
walk your earlier messages (`ComposerHistory`; the app reads them from the
chat when a walk starts); otherwise they move the cursor. Every key here has
an id, so a keymap can move it.
"""

from __future__ import annotations

from textual import events
from textual.binding import Binding
from textual.content import Content
from textual.message import Message

from omoide.tui.history import ComposerHistory
from omoide.tui.widgets.inert import InertTextArea
from omoide.tui.widgets import pacing


class Composer(InertTextArea):
    BINDINGS = [
        Binding("enter", "submit", "Send", id="chat.send", show=False),
        Binding("shift+enter,ctrl+j,alt+enter", "newline", "New line in your message", id="chat.newline", show=False),
        Binding("up", "history(-1)", "Your earlier message (in an empty box)", id="chat.history_prev", show=False),
        Binding("down", "history(1)", "Your later message (back to empty)", id="chat.history_next", show=False),
    ]

    class Submitted(Message):
        """Enter: the text to send (or the command to run)."""

        def __init__(self, composer: Composer, value: str) -> None:
            super().__init__()
            self.composer = composer
            self.value = value

    class HistoryWanted(Message):
        """Up or Down on an empty box (or one showing an earlier message)."""

        def __init__(self, direction: int) -> None:
            super().__init__()
            self.direction = direction

    def __init__(self, *, placeholder: str | Content = "", id: str | None = None) -> None:
        super().__init__(placeholder=placeholder, id=id, soft_wrap=True, compact=True, highlight_cursor_line=False,
                         tab_behavior="focus")
        self.earlier = ComposerHistory()
        """Your earlier messages, for Up and Down (TextArea.history is its undo)."""

    @property
    def value(self) -> str:
        return self.text

    @value.setter
    def value(self, text: str) -> None:
        """Replace the text, the cursor at its end (as an Input's value does)."""
        self.text = text
        self.move_cursor(self.document.end)

    def insert_text_at_cursor(self, text: str) -> None:
        self.insert(text)

    async def _on_key(self, event: events.Key) -> None:
        pacing.key_pressed()  # a streaming reply waits for a pause in typing
        if event.key == "enter":
            # Not a new line, as in a TextArea (prevent_default skips its handler): it bubbles
            # to the bindings (chat.send, where the keymap has it). Not a priority binding
            # either: that would act before the keys typed just ahead of it are in the box.
            event.prevent_default()
            return
        await super()._on_key(event)

    def action_submit(self) -> None:
        self.post_message(self.Submitted(self, self.text))

    def action_newline(self) -> None:
        self.insert("\n")

    def action_history(self, direction: int) -> None:
        if self.earlier.can_start(self.text):
            self.post_message(self.HistoryWanted(direction))
        elif direction < 0:
            self.action_cursor_up()
        else:
            self.action_cursor_down()

    # PageUp and PageDown scroll the chat, as they did before the box had lines of its own.
    async def action_cursor_page_up(self) -> None:  # type: ignore[override]
        await self.app.run_action("scroll_page(-1)")

    async def action_cursor_page_down(self) -> None:  # type: ignore[override]
        await self.app.run_action("scroll_page(1)")
