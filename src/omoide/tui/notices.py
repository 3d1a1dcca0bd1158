"""How many notices are shown at once, and what a repeated one becomes.

At 80 columns Textual's notices were 40 columns wide, padded, and stacked
without end: a few warnings covered half the chat. Here at most `SHOWN` are on
screen (the newest; an older information notice leaves before a warning or an
error does), and a notice that repeats one still shown replaces it, counted
("(×3)"), instead of stacking a copy. Their look (wider, unpadded) is in
app.tcss."""

from __future__ import annotations

import re

from textual.notifications import Notification

SHOWN = 2
"""Notices on screen at once."""
RANK = {"information": 0, "warning": 1, "error": 2}
REPEATS = re.compile(r" \(×(\d+)\)$")


def _base(message: str) -> str:
    return REPEATS.sub("", message)


def make_room(shown: list[Notification], new: Notification) -> list[Notification]:
    """The notices to take away for `new` (which may be renamed as a repeat), oldest first."""
    gone = [n for n in shown if (_base(n.message), n.title, n.severity) == (new.message, new.title, new.severity)]
    if gone:
        times = (int(m.group(1)) if (m := REPEATS.search(gone[-1].message)) else 1) + 1
        new.message = f"{new.message} (×{times})"
    staying = [n for n in shown if n not in gone]
    while len(staying) >= SHOWN:
        oldest = min(staying, key=lambda n: (RANK.get(n.severity, 0), n.raised_at))
        staying.remove(oldest)
        gone.append(oldest)
    return gone
