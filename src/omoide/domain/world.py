"""The shapes of world memory. No I/O here."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum

USER_PREFIX = "user:"
"""`about` keys for the user are `user:NAME` (the persona talked as); for characters, their id."""
SELF = ""
"""`about` for the character's own fields (global memory, its rolling summaries)."""


class Field(StrEnum):
    GLOBAL = "global"
    SUMMARIES = "summaries"
    PAIR_SUMMARIES = "pair_summaries"
    OFFSCREEN = "offscreen"
    MEMORY = "memory"
    GOAL = "goal"
    DESCRIPTOR = "descriptor"
    FAMILIARITY = "familiarity"


LIST_FIELDS = frozenset({Field.SUMMARIES, Field.PAIR_SUMMARIES, Field.OFFSCREEN})
TEXT_FIELDS = frozenset({Field.GLOBAL, Field.MEMORY, Field.GOAL, Field.DESCRIPTOR})
"""The fields a person edits by hand as plain text."""


class UpdateKind(StrEnum):
    LLM = "llm"
    RULE = "rule"
    """Computed, not generated: familiarity."""
    EDIT = "edit"
    RETRACT = "retract"
    """A branch restore took the conversation's end off the chat's path."""
    REINSTATE = "reinstate"
    """The end is back on the path."""
    FAILED = "failed"
    KEPT = "kept"
    """A retract or reinstate that left a field alone because it changed since."""


APPLYING = (UpdateKind.LLM, UpdateKind.RULE)


def user_key(name: str) -> str:
    return f"{USER_PREFIX}{name}"


def is_user(key: str) -> bool:
    return key.startswith(USER_PREFIX)


@dataclass(frozen=True, slots=True)
class Participant:
    key: str
    name: str

    @property
    def is_user(self) -> bool:
        return is_user(self.key)


@dataclass(frozen=True, slots=True)
class Mention:
    """A character who was not there, named in the conversation."""

    key: str
    name: str
    message_id: int
    """The first message that named them."""


@dataclass(frozen=True, slots=True)
class Item:
    """One entry of a rolling list, tagged with the conversation that added it."""

    conversation_id: int | None
    text: str


def dump_items(items: list[Item]) -> str:
    return json.dumps([{"c": i.conversation_id, "text": i.text} for i in items], ensure_ascii=False)


def load_items(value: str | None) -> list[Item]:
    if not value:
        return []
    return [Item(d.get("c"), str(d.get("text", ""))) for d in json.loads(value)]


@dataclass(frozen=True, slots=True)
class Conversation:
    id: int
    chat_id: int
    first_id: int | None
    """The first message of the range; the range runs down the path to `end_id`."""
    end_id: int
    participants: list[Participant]
    mentions: list[Mention]
    reason: str
    """'user' (/end, `omoide end`) or 'idle'."""
    state: str
    """'pending' (its pass has not run to the end), 'done', or 'incomplete' (a step failed; retried)."""
    in_force: bool
    """False while a branch restore has taken its end off the chat's path."""
    attempts: int
    ended_at: datetime

    @property
    def characters(self) -> list[Participant]:
        return [p for p in self.participants if not p.is_user]


@dataclass(frozen=True, slots=True)
class Update:
    id: int
    conversation_id: int | None
    message_id: int | None
    owner: str
    about: str
    field: Field
    step: str
    kind: UpdateKind
    before: str | None
    after: str | None
    template: str | None
    model: str | None
    error: str | None
    created_at: datetime


@dataclass(slots=True)
class Relationship:
    """What `owner` carries about one other person."""

    about: str
    descriptor: str = ""
    familiarity: float = 0.0
    goal: str = ""
    memory: str = ""
    pair_summaries: list[Item] = field(default_factory=list)
    offscreen: list[Item] = field(default_factory=list)

    def empty(self) -> bool:
        return not (self.descriptor or self.goal or self.memory or self.pair_summaries or self.offscreen or self.familiarity)


@dataclass(slots=True)
class WorldView:
    """Everything one character carries, as it stands now."""

    owner: str
    global_memory: str = ""
    summaries: list[Item] = field(default_factory=list)
    relationships: dict[str, Relationship] = field(default_factory=dict)

    def about(self, key: str) -> Relationship:
        return self.relationships.get(key) or Relationship(key)

    def set(self, about: str, name: Field, value: str) -> None:
        if about == SELF:
            if name is Field.GLOBAL:
                self.global_memory = value
            elif name is Field.SUMMARIES:
                self.summaries = load_items(value)
            return
        rel = self.relationships.setdefault(about, Relationship(about))
        if name is Field.FAMILIARITY:
            rel.familiarity = float(value or 0)
        elif name in LIST_FIELDS:
            setattr(rel, name.value, load_items(value))
        else:
            setattr(rel, name.value, value)
