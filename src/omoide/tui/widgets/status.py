"""The status bar: amnesia when on, backend, model (and that the embedded one is
a demo), last prompt's size, memory work."""

from __future__ import annotations

from textual.reactive import reactive
from textual.widgets import Static

from omoide.llm.base import Backend
from omoide.safe_text import inert


class StatusBar(Static):
    DEFAULT_CSS = """
    StatusBar { height: 1; background: $panel; color: $text-muted; padding: 0 1; }
    """

    backend: reactive[str] = reactive("")
    tokens: reactive[str] = reactive("")
    memory: reactive[str] = reactive("")
    activity: reactive[str] = reactive("")
    amnesia: reactive[str] = reactive("")
    note: reactive[str] = reactive("")
    """Said after the model's name: that the embedded model is a small demo."""

    def render(self) -> str:
        parts = [f"⊘ amnesia: {self.amnesia}" if self.amnesia else "", self.backend + (f" ({self.note})" if self.note else "")]
        if self.tokens:
            parts.append(self.tokens)
        if self.activity:
            parts.append(self.activity)
        if self.memory:
            parts.append(self.memory)
        return inert("  │  ".join(p for p in parts if p)).replace("\n", " ")


MEMORY_IDLE = "memory idle"
DEMO_NOTE = "small demo model · /models gets a real one"


def demo_note(backend: Backend) -> str:
    """DEMO_NOTE when `backend` is one of the tiny embedded models omoide ships."""
    return DEMO_NOTE if backend.name == "local" and getattr(backend, "embedded", False) else ""


def memory_label(status: str) -> str:
    """The status bar's memory indicator for `ChatSession.memory_status`."""
    if not status:
        return MEMORY_IDLE
    if status.startswith("memo gap"):  # retried from the book, not at the next turn
        return status
    if "fail" in status:
        start, end = status.find("("), status.rfind(")")
        reason = status[start + 1 : end] if 0 <= start < end else status
        return f"memory: failed ({reason}) — will retry"
    return f"◐ {status}"
