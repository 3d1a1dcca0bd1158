"""Who witnessed what on one path of a chat: the knowledge boundaries of a
group scene (docs/memory-check.md).

A character present at a message (by depth on the path) witnessed it. The
opening cast is present from the root; a stage note inviting a character
starts its stretch (it sees itself arrive), one letting it go ends the stretch
there. In a one-on-one chat the chat's character witnessed everything and no
one else anything. Memory made from messages is readable by a character only
when it witnessed every message the memory was made from: this is what keeps
a secret told before a character arrived out of its prompt.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

Stretch = tuple[int, int | None]
"""Depths [first, last] a character was present for; last None: still present."""


@dataclass(frozen=True, slots=True)
class Attendance:
    stretches: Mapping[str, tuple[Stretch, ...]]
    """Character id -> the stretches of the path it was present for, oldest first."""
    scene: bool = False
    """False: a one-on-one chat (its character witnessed everything)."""

    @classmethod
    def one_on_one(cls, character: str) -> Attendance:
        return cls({character: ((0, None),)}, scene=False)

    @classmethod
    def from_notes(cls, opening: Sequence[str], notes: Iterable[tuple[int, str, str]]) -> Attendance:
        """From the opening cast and the stage notes on the path, as (depth,
        character, 'invite' | 'leave') in path order."""
        open_since: dict[str, int] = {key: 0 for key in opening}
        done: dict[str, list[Stretch]] = {key: [] for key in opening}
        for depth, key, stage in notes:
            if stage == "invite" and key not in open_since:
                open_since[key] = depth
                done.setdefault(key, [])
            elif stage == "leave" and key in open_since:
                done.setdefault(key, []).append((open_since.pop(key), depth))
        for key, since in open_since.items():
            done.setdefault(key, []).append((since, None))
        return cls({key: tuple(stretches) for key, stretches in done.items()}, scene=True)

    def witnessed(self, key: str, depth: int) -> bool:
        return any(first <= depth and (last is None or depth <= last) for first, last in self.stretches.get(key, ()))

    def witnessed_all(self, key: str, first: int, last: int) -> bool:
        """Whether `key` was present for every depth in [first, last]."""
        return any(start <= first and (end is None or last <= end) for start, end in self.stretches.get(key, ()))

    def witnessed_any(self, key: str, first: int, last: int) -> bool:
        return any(start <= last and (end is None or first <= end) for start, end in self.stretches.get(key, ()))

    def present(self) -> list[str]:
        """Who is present at the end of the path (the head), in the order they came."""
        here = [(stretches[-1][0], key) for key, stretches in self.stretches.items() if stretches and stretches[-1][1] is None]
        return [key for _, key in sorted(here, key=lambda pair: pair[0])]

    def everyone(self) -> list[str]:
        return list(self.stretches)


@dataclass(frozen=True, slots=True)
class Reader:
    """One character's view of a chat's memory at a head: whose prompt is being
    gathered, and who witnessed what on the path to that head."""

    key: str
    attendance: Attendance

    @property
    def bounded(self) -> bool:
        """Whether anything needs leaving out: only in a scene."""
        return self.attendance.scene

    def saw(self, depth: int) -> bool:
        return self.attendance.witnessed(self.key, depth)

    def saw_all(self, first: int, last: int) -> bool:
        return self.attendance.witnessed_all(self.key, first, last)

    def reads(self, owner: str | None, depth: int) -> bool:
        """Memory written at `depth` for `owner` (None: for whoever was there)."""
        return owner == self.key if owner is not None else self.saw(depth)
