"""How many notices are shown at once, and what a repeated one becomes.

At 80 columns Textual's notices were 40 columns wide, padded, and stacked
without end: a few warnings covered half the chat. Here at most `SHOWN` are on
screen (the newest; an older information notice leaves before a warning or an
error does), and a notice that repeats one still shown replaces it, counted
("(×3)"), instead of stacking a copy. Their look (wider, unpadded) is in
app.tcss."""

from __future__ import annotations

import re

from textual.app import App
from textual.notifications import Notification, Notify, SeverityLevel

from omoide.safe_text import inert

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


class NoticesApp(App[None]):
    """The app's notices: inert text, few at once (`TurnsApp` builds on this)."""

    def notify(self, message: str, *, title: str = "", severity: SeverityLevel = "information",
               timeout: float | None = None, markup: bool = False) -> None:
        """Notices carry error messages, file paths and the user's own text, none of
        them Textual markup: '[Errno 111]' must show as typed, and a stray '[/]' must
        not raise. So markup is off for every notice, whoever sends it."""
        super().notify(inert(message), title=inert(title), severity=severity, timeout=timeout, markup=False)

    def _on_notify(self, event: Notify) -> None:
        """At most SHOWN notices at once, a repeat counted rather than stacked (make_room)."""
        for old in make_room(list(self._notifications), event.notification):
            self._unnotify(old, refresh=False)
        super()._on_notify(event)
