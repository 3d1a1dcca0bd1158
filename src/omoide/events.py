"""What a ChatSession reports while a turn runs and while memory work runs in
the background. Clients (the TUI, the CLI) match on these."""

from __future__ import annotations

from dataclasses import dataclass

from omoide.domain import DiaryEntry, Memo, Message, ProfileFact, Summary
from omoide.errors import BackendError
from omoide.llm.base import Usage


@dataclass(frozen=True, slots=True)
class UserMessageStored:
    message: Message


@dataclass(frozen=True, slots=True)
class ReplyStarted:
    message: Message
    """The reply's row, stored at once with status 'streaming' and empty content."""


@dataclass(frozen=True, slots=True)
class ReplyDelta:
    text: str
    """Visible text only: inline <save_memory> tags are already taken out."""


@dataclass(frozen=True, slots=True)
class DiarySaved:
    entry: DiaryEntry


@dataclass(frozen=True, slots=True)
class ProfileLearned:
    """A character marked what it saved as a fact about the user."""

    fact: ProfileFact
    accepted: bool
    """True with profile_learning = "auto"; otherwise it waits for the user (a proposal)."""


@dataclass(frozen=True, slots=True)
class MemoryRecalled:
    """The character used the recall tool; the reply continues with what came back."""

    query: str
    lines: list[str]


@dataclass(frozen=True, slots=True)
class ReplyFinished:
    message: Message
    usage: Usage | None = None


@dataclass(frozen=True, slots=True)
class ReplyFailed:
    error: BackendError
    message: Message | None
    """The partial reply, kept and marked interrupted, or None if nothing arrived."""


@dataclass(frozen=True, slots=True)
class ChangedElsewhere:
    """Another window (a TUI, `omoide say`) wrote in this chat during the turn."""

    note: str
    """What happened and where your text went, for the user."""
    forked: bool = False
    """True: the reply went to a saved branch, and the chat's head is the other window's."""


TurnEvent = (
    UserMessageStored | ReplyStarted | ReplyDelta | DiarySaved | ProfileLearned | MemoryRecalled | ReplyFinished | ReplyFailed
    | ChangedElsewhere
)


@dataclass(frozen=True, slots=True)
class MemoryWorkStarted:
    kind: str
    """'summary', 'diary' or 'memo'."""


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
