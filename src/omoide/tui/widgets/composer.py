"""The line you type into. Its Enter has an id, so a keymap can move "send"."""

from __future__ import annotations

from textual import events
from textual.binding import Binding
from textual.widgets import Input

from omoide.tui.widgets import pacing


class Composer(Input):
    BINDINGS = [Binding("enter", "submit", "Send", id="chat.send", show=False)]

    async def _on_key(self, event: events.Key) -> None:
        pacing.key_pressed()  # a streaming reply waits for a pause in typing
        await super()._on_key(event)
