"""Plain dataclasses shared by every layer. No I/O here."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any


class Role(StrEnum):
    SYSTEM = "system"
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"


class MessageStatus(StrEnum):
    COMPLETE = "complete"
    STREAMING = "streaming"
    """A reply still being written. Found after a crash, it reads as interrupted."""
    INTERRUPTED = "interrupted"
    """The user stopped the reply, or the process died: what arrived is kept."""
    FAILED = "failed"
    """The backend failed before anything arrived; kept so the turn is visible."""


@dataclass(frozen=True, slots=True)
class Message:
    id: int
    chat_id: int
    parent_id: int | None
    role: Role
    content: str
    created_at: datetime
    status: MessageStatus = MessageStatus.COMPLETE
    tool_calls: list[dict[str, Any]] | None = None
    tool_call_id: str | None = None
    depth: int = 0
    """Number of ancestors; the root (greeting) has depth 0."""
    speaker: str | None = None
    """In a group scene: the character (id) who wrote this reply, or whom a stage
    note is about. None in a one-on-one chat: the chat's character."""
    stage: str | None = None
    """'invite' or 'leave' for a stage note (a system message); None otherwise."""
    error: str | None = None
    """Why the reply failed (status failed) or was cut off by an error, as the user was told."""

    @property
    def interrupted(self) -> bool:
        return self.status in (MessageStatus.INTERRUPTED, MessageStatus.STREAMING)


@dataclass(frozen=True, slots=True)
class Chat:
    id: int
    character: str
    """The character's id (its folder name or imported card slug)."""
    title: str
    head_id: int | None
    created_at: datetime
    updated_at: datetime
    archived: bool = False
    message_count: int = 0
    persona: str | None = None
    """The persona name chosen for this chat with /persona; None for the default."""
    amnesia: tuple[str, ...] = ()
    """Memory tiers hidden from this chat's prompt by /amnesia (nothing is deleted)."""
    cast: tuple[str, ...] = ()
    """Every character ever in the chat, in the order they came (empty: only `character`)."""

    @property
    def participants(self) -> tuple[str, ...]:
        return self.cast or (self.character,)


@dataclass(frozen=True, slots=True)
class Branch:
    chat_id: int
    name: str
    message_id: int
    created_at: datetime
    auto: bool = False
    """Saved automatically before a restore, so the restore can be undone."""


class DiaryAuthor(StrEnum):
    CHARACTER = "character"
    USER = "user"
    COMPRESSION = "compression"


@dataclass(frozen=True, slots=True)
class DiaryEntry:
    id: int
    chat_id: int
    message_id: int
    """The message at which the entry was written: it exists on that message's subtree."""
    content: str
    author: DiaryAuthor
    created_at: datetime
    prev_id: int | None = None
    """The previous entry on the same path; entries form backward-linked chains."""
    importance: int | None = None
    """1-5, how much it matters; None on entries written before weights existed."""
    emotion: str | None = None
    """One word for the feeling attached ('joy', 'grief' ...), if the writer gave one."""
    origin_id: int | None = None
    """The entry this one was kept from, word for word, by a diary compression."""
    owner: str | None = None
    """In a scene: the character whose diary this is; None: every character of the chat reads it."""

    @property
    def memory_id(self) -> int:
        """The id mentions are recorded under: the original entry's, for a kept copy."""
        return self.origin_id or self.id

    @property
    def compressed(self) -> bool:
        return self.author is DiaryAuthor.COMPRESSION

    def heading(self) -> str:
        label = {
            DiaryAuthor.CHARACTER: "diary entry",
            DiaryAuthor.USER: "diary entry (written by you)",
            DiaryAuthor.COMPRESSION: "diary, compressed",
        }[self.author]
        return f"## {self.created_at:%m/%d} - {label}"

    def as_markdown(self) -> str:
        return f"{self.heading()}\n{self.content.strip()}\n"


@dataclass(frozen=True, slots=True)
class Summary:
    """A memory checkpoint: the running summary of the chat up to `covers_to_id`,
    and the point up to which diary entries are folded into the stable prompt."""

    id: int
    chat_id: int
    anchor_id: int
    """The message at which it came into being; in force on that message's subtree."""
    covers_to_id: int | None
    """The newest message compressed into the summary text."""
    diary_to_id: int | None
    """The newest diary entry folded into the stable diary block."""
    content: str
    created_at: datetime
    owner: str | None = None
    """In a scene: the character whose own summary this is (of what it witnessed);
    None: the chat's, read by whoever witnessed everything it covers."""


@dataclass(frozen=True, slots=True)
class Recap:
    """A part a compression appended to the running summary, or the summary a
    rewrite made (`whole`), and the message at which it was written (its
    checkpoint's anchor)."""

    anchor_id: int
    text: str
    whole: bool = False


@dataclass(frozen=True, slots=True)
class SummaryTimeline:
    """The running summary laid out in the window: the last rewrite and each part
    appended since, each where it was written (`base`, before the window, is
    what of it is older than the checkpoints walked), so a compression or a
    rewrite only ever adds text after what a prompt cache holds
    (memory/timeline.py)."""

    base: str
    recaps: tuple[Recap, ...]


@dataclass(frozen=True, slots=True)
class MemoryState:
    """What the character remembers at one head of the message tree."""

    summary: Summary | None
    stable_diary: list[DiaryEntry] = field(default_factory=list)
    """Diary entries folded in at the last checkpoint, oldest first."""
    new_diary: list[DiaryEntry] = field(default_factory=list)
    """Entries saved since the last checkpoint, oldest first (the volatile tail)."""
    window: list[Message] = field(default_factory=list)
    """Messages on the path not covered by the summary, oldest first."""
    memos: list[Memo] = field(default_factory=list)
    """Memos of the batches before the raw window, oldest first (the stable memo layer)."""
    new_memos: list[Memo] = field(default_factory=list)
    """Memos you wrote inside the raw window's stretch (the volatile tail)."""
    timeline: SummaryTimeline | None = None
    """The summary laid out for a prompt whose window only grows, when parts were
    appended since its last rewrite: read only for such a prompt (chat/turn.py,
    memory/timeline.py); None otherwise."""

    @property
    def diary(self) -> list[DiaryEntry]:
        return [*self.stable_diary, *self.new_diary]


class MemoAuthor(StrEnum):
    MODEL = "model"
    """Made from a batch of messages by the summarizer backend."""
    USER = "user"
    """Written (or, on a version, edited) by you."""


class MemoStatus(StrEnum):
    OK = "ok"
    FAILED = "failed"
    """Making it failed: a visible gap in the book, to be retried."""


@dataclass(frozen=True, slots=True)
class Memo:
    """A page of the memo book, as its newest version has it. The memo row itself
    never changes; every edit, hide, retry is a new version (`version_id`)."""

    id: int
    chat_id: int
    anchor_id: int
    """The last message of its batch (or, for a memo you wrote, the head you wrote it at):
    it is in force on that message's subtree."""
    anchor_depth: int
    first_id: int | None
    """The first message of its batch; None for a memo you wrote."""
    author: MemoAuthor
    version_id: int
    version_author: MemoAuthor
    status: MemoStatus
    highlights: tuple[str, ...]
    created_at: datetime
    updated_at: datetime
    hidden: bool = False
    reason: str | None = None
    """Why making it failed (a gap)."""
    first_at: datetime | None = None
    last_at: datetime | None = None
    """When the first and last messages of its batch were written."""
    first_depth: int | None = None
    """The depth of the first message of its batch (None for a memo you wrote)."""
    owner: str | None = None
    """In a scene: the character whose own memo this is, made from the part of the
    batch it witnessed; None: the chat's."""

    @property
    def gap(self) -> bool:
        return self.status is MemoStatus.FAILED

    @property
    def byline(self) -> str:
        if self.author is MemoAuthor.USER:
            return "written by you"
        return "edited by you" if self.version_author is MemoAuthor.USER else "made"

    @property
    def span(self) -> str:
        """`#first–#last`, or `at #anchor` for a memo you wrote."""
        return f"#{self.first_id}–#{self.anchor_id}" if self.first_id is not None else f"at #{self.anchor_id}"

    @property
    def jump_id(self) -> int:
        """The message the book jumps to: the first of its batch."""
        return self.first_id if self.first_id is not None else self.anchor_id
@dataclass(frozen=True, slots=True)
class Mention:
    """A memory brought up again at a message (see memory/weights.py for how it is detected)."""

    id: int
    kind: str
    """'diary' (or another memory tier with its own ids)."""
    memory_id: int
    message_id: int
    created_at: datetime


class FactStatus(StrEnum):
    ACTIVE = "active"
    PROPOSED = "proposed"
    """Learned by a character, waiting for the user to accept or reject it."""
    REJECTED = "rejected"
    REMOVED = "removed"
    """Taken out of the profile by the user; kept, never deleted."""


@dataclass(frozen=True, slots=True)
class ProfileFact:
    id: int
    content: str
    status: FactStatus
    source: str
    """'' when the user wrote it, else the id of the character that learned it."""
    chat_id: int | None
    message_id: int | None
    """The message at which the character learned it."""
    created_at: datetime


@dataclass(frozen=True, slots=True)
class Profile:
    """What is true about the user across every character and chat."""

    name: str = ""
    address: str = ""
    """How to address the user."""
    pronouns: str = ""
    facts: list[ProfileFact] = field(default_factory=list)
    """Active facts, oldest first."""
    proposals: list[ProfileFact] = field(default_factory=list)
    """Facts characters learned, waiting for a decision."""

    @property
    def empty(self) -> bool:
        return not (self.name or self.address or self.pronouns or self.facts)


class PinSource(StrEnum):
    """Where a pinned fact came from."""

    TYPED = "typed"
    MESSAGE = "message"
    DIARY = "diary"


@dataclass(frozen=True, slots=True)
class Pin:
    """A fact kept in every prompt of one character, whatever is compressed."""

    id: int
    character: str
    content: str
    source: PinSource
    created_at: datetime
    chat_id: int | None = None
    """The chat it was pinned in."""
    message_id: int | None = None
    """The message pinned (source 'message')."""
    diary_id: int | None = None
    """The diary entry pinned (source 'diary')."""
