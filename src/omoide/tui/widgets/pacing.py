"""When a streaming reply may redraw: so that typing stays responsive.

A redraw of a streaming reply re-lays and re-draws most of the screen (the
transcript scrolls as it grows), and a key pressed meanwhile waits for it. So
streamed text is shown at most every FLUSH_INTERVAL; and while you type (a key
within TYPING), once right after each key (AFTER_KEY later, when your key is
on screen), in the pause before the next one, and at least every MAX_HOLD.
"""

from __future__ import annotations

import time

FLUSH_INTERVAL = 0.05
"""Seconds between two redraws of a streaming reply, at the most often."""
TYPING = 1.0
"""A key pressed this recently means you are typing."""
AFTER_KEY = 0.03
"""While you type, the reply redraws this long after a key (once that key is drawn)."""
MAX_HOLD = 0.5
"""While you type, streamed text still shows at least this often."""
RECHECK = 0.03
"""How often a held redraw looks whether a key has come."""

_last_key = float("-inf")


def key_pressed() -> None:
    """The composer calls this on every key."""
    global _last_key
    _last_key = time.monotonic()


def hold_for(shown_at: float, now: float | None = None) -> float:
    """Seconds to wait before redrawing a reply last shown at `shown_at`
    (time.monotonic()); 0 means now."""
    now = time.monotonic() if now is None else now
    due = shown_at + FLUSH_INTERVAL
    if now - _last_key < TYPING:
        after_key = _last_key + AFTER_KEY if shown_at < _last_key + AFTER_KEY else float("inf")
        due = max(due, min(after_key, shown_at + MAX_HOLD))
    return max(0.0, due - now)


def next_check(shown_at: float) -> float:
    """When a flusher should look again (a timer needs more than 0 s): a key may
    come meanwhile and bring the redraw forward."""
    return max(0.001, min(hold_for(shown_at), RECHECK))
