"""The status bar: that the mouse is off (F2) while it is, amnesia when on,
backend, model (and that the embedded one is a demo), last prompt's size,
memory work. On a narrow terminal it says less
rather than being cut: the demo note and the prompt size get their short forms,
an idle memory goes unsaid, then the model's name is shortened; who is writing
and the way to a real model (/models) stay."""

from __future__ import annotations

from rich.cells import cell_len
from textual.reactive import reactive
from textual.widgets import Static

from omoide.llm.base import Backend
from omoide.safe_text import inert, oneline

SEPARATOR = "  │  "


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
    mode: reactive[str] = reactive("")
    """Said first, while it lasts: that the mouse is off."""

    def render(self) -> str:
        width = self.content_region.width
        if not self.mode:
            return fit_status(self.amnesia, self.backend, self.note, self.tokens, self.activity, self.memory, width=width)
        room = width - cell_len(self.mode) - len(SEPARATOR) if width > 0 else 0  # 0: not laid out yet, no limit
        line = fit_status(self.amnesia, self.backend, self.note, self.tokens, self.activity, self.memory, width=max(room, 1) if width > 0 else 0)
        return f"{inert(self.mode)}{SEPARATOR}{line}"


MEMORY_IDLE = "memory idle"
DEMO_NOTE = "small demo model · /models gets a real one"
DEMO_SHORT = "demo model · /models for a real one"
DEMO_SHORTEST = "demo · /models"


def _line(amnesia: str, backend: str, note: str, tokens: str, activity: str, memory: str) -> str:
    parts = [f"⊘ amnesia: {amnesia}" if amnesia else "", backend + (f" ({note})" if note else ""), tokens, activity, memory]
    return SEPARATOR.join(" ".join(inert(p).split()) for p in parts if p)


def fit_status(amnesia: str, backend: str, note: str, tokens: str, activity: str, memory: str, *, width: int) -> str:
    """The status line in `width` cells (no limit when `width` is 0, not laid out yet):
    the whole line if it fits, else shorter forms in turn, the model's name cut last."""
    line = _line(amnesia, backend, note, tokens, activity, memory)
    if width <= 0 or cell_len(line) <= width:
        return line
    if note:
        note = DEMO_SHORT
    tokens = tokens.removeprefix("prompt ")
    memory = "" if memory == MEMORY_IDLE else memory
    for shortest_note in (False, True):
        if shortest_note and note:
            note = DEMO_SHORTEST
        line = _line(amnesia, backend, note, tokens, activity, memory)
        if cell_len(line) <= width:
            return line
        room = width - (cell_len(_line(amnesia, "x", note, tokens, activity, memory)) - 1)  # what the name may take
        if room >= 16 or (shortest_note and room >= 8):
            return _line(amnesia, oneline(backend, room), note, tokens, activity, memory)
    return line[: width - 1] + "…"  # narrower than any short form: cut, as it would be anyway


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
