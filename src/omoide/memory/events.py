"""What background memory work (summaries, diary compression, memos, the world
pass) reports. Clients match on these."""

from __future__ import annotations

from dataclasses import dataclass

from omoide.domain.chat import DiaryEntry, Memo, Summary


@dataclass(frozen=True, slots=True)
class MemoryWorkStarted:
    kind: str
    """'summary', 'diary' or 'memo'."""
    left: int = 0
    """Messages still to fold in after this part (catching up on lines stored with no reply between them)."""


@dataclass(frozen=True, slots=True)
class MemoryWorkDone:
    kind: str
    summary: Summary | None = None
    entry: DiaryEntry | None = None
    memo: Memo | None = None


@dataclass(frozen=True, slots=True)
class MemoryWorkFailed:
    kind: str
    reason: str
    """Readable, for the status bar; the work is retried at a later turn."""


@dataclass(frozen=True, slots=True)
class MemoryNotice:
    """Memory work went on, but the user should know something: their copy of a
    template was broken, and the shipped default was used instead."""

    note: str


MemoryEvent = MemoryWorkStarted | MemoryWorkDone | MemoryWorkFailed | MemoryNotice
