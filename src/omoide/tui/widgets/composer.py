"""The box you type into: Enter sends, a newline key (Ctrl+J in every terminal;
Alt+Enter outside tmux; Shift+Enter where the terminal tells it from Enter)
starts a new line, and the box grows with its lines (a few, then it scrolls).

Up and Down in an empty box, or one showing an earlier message unchanged,
walk your earlier messages (`ComposerHistory`; the app reads them from the
chat when a walk starts); otherwise they move the cursor. Every key here has
an id, so a keymap can move it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from textual import events
from textual.binding import Binding
from textual.content import Content
from textual.message import Message

from omoide.tui.history import ComposerHistory
from omoide.tui.widgets.inert import InertTextArea
from omoide.tui.widgets import pacing


NEWLINE_KEYS = "shift+enter,ctrl+j,alt+enter"
_SHOWN = {"ctrl+j": "Ctrl+J", "alt+enter": "Alt+Enter", "shift+enter": "Shift+Enter"}


def in_tmux(environ: Mapping[str, str]) -> bool:
    """True inside tmux (or screen), where Alt+Enter reaches omoide as a plain Enter."""
    return bool(environ.get("TMUX")) or environ.get("TERM", "").startswith(("tmux", "screen"))


def newline_help(keys: str, environ: Mapping[str, str] = os.environ) -> str:
    """What /help says of the newline keys `keys` (as bound): which of them work
    in this terminal. Ctrl+J is a plain line feed, which every terminal sends;
    tmux turns Alt+Enter into Enter, and Shift+Enter is told apart from Enter
    only under the kitty keyboard protocol."""
    what = "New line in your message"
    bound = [key.strip() for key in keys.split(",")]
    if not in_tmux(environ):
        return what + (" (Shift+Enter only where the terminal tells it from Enter)" if "shift+enter" in bound else "")
    lost = [_SHOWN[key] for key in bound if key in ("alt+enter", "shift+enter")]
    if not lost:
        return what
    here = [_SHOWN.get(key, key) for key in bound if key not in ("alt+enter", "shift+enter")]
    verbs = "reach omoide as Enter there and send" if len(lost) > 1 else "reaches omoide as Enter there and sends"
    said = f"{' and '.join(lost)} {verbs}"
    if not here:
        return f'{what}. In tmux (here) none of these keys works: {said}; set "chat.newline" = "ctrl+j" in [ui.keymap]'
    return f"{what}. In tmux (here) use {' or '.join(here)}: {said}"


class Composer(InertTextArea):
    BINDINGS = [
        Binding("enter", "submit", "Send", id="chat.send", show=False),
        Binding(NEWLINE_KEYS, "newline", "New line in your message", id="chat.newline", show=False),
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
        if event.key in self._newline_keys():
            # Here, not through the binding: a binding acts once the key has bubbled up, and
            # by then the keys typed right after it may already be in the box ("l2l3", and the
            # line break at the end, where sending drops it).
            event.prevent_default()
            event.stop()
            self.action_newline()
            return
        await super()._on_key(event)

    def _newline_keys(self) -> list[str]:
        """The newline keys as the keymap has them, less any it gives to another action."""
        keymap: Mapping[str, str] = getattr(self.app, "keymap", None) or {}
        taken = {key.strip() for binding_id, keys in keymap.items() if binding_id != "chat.newline" for key in keys.split(",")}
        return [key for key in (k.strip() for k in keymap.get("chat.newline", NEWLINE_KEYS).split(",")) if key not in taken]

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
