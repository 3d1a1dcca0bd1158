"""The line you type into. Its Enter has an id, so a keymap can move "send"."""

from __future__ import annotations

from textual.binding import Binding
from textual.widgets import Input


class Composer(Input):
    BINDINGS = [Binding("enter", "submit", "Send", id="chat.send", show=False)]
