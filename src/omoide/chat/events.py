"""What a ChatSession reports while a turn runs. Clients (the TUI, the CLI)
match on these; background memory work reports `omoide.memory.events`."""

from __future__ import annotations

from dataclasses import dataclass

from omoide.domain.chat import Branch, DiaryEntry, Message, ProfileFact
from omoide.errors import BackendError
from omoide.llm.base import Usage


@dataclass(frozen=True, slots=True)
class UserMessageStored:
    message: Message


@dataclass(frozen=True, slots=True)
class MessageRewritten:
    """A reply you edited, stored as a new sibling of the old one (now the head)."""

    message: Message


@dataclass(frozen=True, slots=True)
class PathKept:
    """The messages after the one acted on (or an /edit) left the path; the old head
    is saved as the automatic branch of this name, so it can be reopened."""

    branch: str


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


@dataclass(frozen=True, slots=True)
class PromptNotice:
    """Something about this turn's prompt the user should hear (lore the budget left out)."""

    note: str


TurnEvent = (
    UserMessageStored | ReplyStarted | ReplyDelta | DiarySaved | ProfileLearned | MemoryRecalled | ReplyFinished | ReplyFailed
    | ChangedElsewhere | PromptNotice | MessageRewritten | PathKept
)
