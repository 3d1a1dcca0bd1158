"""Your earlier messages on Up and Down in an empty composer, as a shell does.

`ComposerHistory` walks a list of your messages (oldest first, as the path has
them): Up shows the one before the one shown (the newest first), Down the one
after, and Down past the newest gives the composer back empty. The walk only
goes on while the composer holds what it put there: a changed line is yours,
and Up then leaves it alone.
"""

from __future__ import annotations


class ComposerHistory:
    def __init__(self) -> None:
        self.entries: list[str] = []
        self._index: int | None = None
        """Which entry the composer shows; None: not walking (the composer is the user's)."""

    def walking(self, value: str) -> bool:
        """Whether the composer shows the entry this put there, unchanged."""
        return self._index is not None and self.entries[self._index] == value

    def can_start(self, value: str) -> bool:
        """Whether Up or Down should act on a composer holding `value`."""
        return not value or self.walking(value)

    def load(self, entries: list[str]) -> None:
        """Start a walk over `entries` (oldest first)."""
        self.entries = [e for e in entries if e.strip()]
        self._index = None

    def reset(self) -> None:
        self.entries = []
        self._index = None

    def step(self, direction: int, value: str) -> str | None:
        """The text to show after Up (-1) or Down (+1), or None when nothing changes."""
        if not self.can_start(value) or not self.entries:
            return None
        if self._index is None:
            if direction > 0:
                return None
            self._index = len(self.entries) - 1
            return self.entries[self._index]
        index = self._index + direction
        if index < 0:
            return None  # the oldest is shown: stay there
        if index >= len(self.entries):
            self._index = None
            return ""
        self._index = index
        return self.entries[index]
