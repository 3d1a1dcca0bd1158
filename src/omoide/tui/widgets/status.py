"""The status bar: backend, model, last prompt's size, memory work."""

from __future__ import annotations

from textual.reactive import reactive
from textual.widgets import Static


class StatusBar(Static):
    DEFAULT_CSS = """
    StatusBar { height: 1; background: $panel; color: $text-muted; padding: 0 1; }
    """

    backend: reactive[str] = reactive("")
    tokens: reactive[str] = reactive("")
    memory: reactive[str] = reactive("")
    activity: reactive[str] = reactive("")

    def render(self) -> str:
        parts = [self.backend]
        if self.tokens:
            parts.append(self.tokens)
        if self.activity:
            parts.append(self.activity)
        if self.memory:
            parts.append(self.memory)
        return "  │  ".join(p for p in parts if p)
