"""Recall: the character (the `recall` tool) or the user (`/recall TEXT`) brings
past moments back, found with the full-text index over the messages on the
path to the head and the diary entries written on it.

Ranking: score = relevance x (0.5 + 0.5 x recency), where relevance is the
bm25 score over the best candidate's (0..1] and recency = 0.5^(age / half_life)
with the memory half-life. A fresh hit counts double an ancient one of the same
relevance; an irrelevant recent one never beats a relevant old one by much.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from typing import TYPE_CHECKING

from omoide.llm.base import ToolSpec
from omoide.memory.weights import STOPWORDS

if TYPE_CHECKING:  # the prompt imports this module's constants; it needs no store
    from omoide.domain.witness import Reader
    from omoide.store import Store
    from omoide.store.recall import Candidate

RECALL = ToolSpec(
    name="recall",
    description=(
        "Search your memory of this whole story (every past message and diary entry) for a past moment, "
        "when the user refers to something you no longer have in front of you. Returns a few dated excerpts."
    ),
    parameters={
        "type": "object",
        "properties": {"query": {"type": "string", "description": "A few words naming what to remember."}},
        "required": ["query"],
    },
)
NATIVE_INSTRUCTIONS = "When the user brings up a past moment you do not see above, call the recall tool to remember it."
INLINE_INSTRUCTIONS = (
    "When the user brings up a past moment you do not see above, write <recall>a few words</recall> "
    "and stop; what you remember will be given to you, then continue your reply."
)
RESULTS = 4
"""Excerpts returned per recall."""
MAX_TERMS = 12
NOTHING = "Nothing comes back to you about that."


@dataclass(frozen=True, slots=True)
class Recalled:
    when: datetime
    who: str
    excerpt: str
    score: float
    kind: str
    """'message' or 'diary'."""
    message_id: int
    depth: int = 0
    owner: str | None = None
    """A diary entry's owner (scenes)."""

    def line(self) -> str:
        return f"[{self.when.astimezone():%Y-%m-%d}] {self.who}: {' '.join(self.excerpt.split())}"


def query_terms(text: str) -> list[str]:
    words = [w.casefold() for w in re.findall(r"[^\W_]{3,}", text, flags=re.UNICODE)]
    unique = list(dict.fromkeys(w for w in words if w not in STOPWORDS))
    return unique[:MAX_TERMS]


def rank(candidates: Sequence[Candidate], *, now: datetime, half_life_days: float, limit: int = RESULTS) -> list[tuple[Candidate, float]]:
    """The best `limit` candidates by relevance and recency, best first."""
    if not candidates:
        return []
    best = max(c.relevance for c in candidates) or 1.0
    scored = []
    for c in candidates:
        age = max((now - c.created_at).total_seconds() / 86400, 0.0)
        recency = 0.5 ** (age / half_life_days)
        scored.append((c, (c.relevance / best) * (0.5 + 0.5 * recency)))
    scored.sort(key=lambda pair: (-pair[1], -pair[0].message_id))
    return scored[:limit]


def result_text(lines: Sequence[str]) -> str:
    """What the model is told a recall brought back."""
    return "You remember:\n" + "\n".join(lines) if lines else NOTHING


async def recall(
    store: Store, chat_id: int, head_id: int, query: str, *, now: datetime, half_life_days: float,
    names: tuple[str, str], skip: Sequence[int] = (), messages: bool = True, diary: bool = True, limit: int = RESULTS,
    reader: Reader | None = None, speakers: Mapping[str, str] | None = None,
) -> list[Recalled]:
    """What `query` brings back on the path to `head_id`: messages (not those in
    `skip`, already in the prompt) and diary entries. `names` = (user, character).
    With `reader` (a speaker in a scene), only what it witnessed and its own diary;
    `speakers` (id -> name) names who said each reply of a scene."""
    terms = query_terms(query)
    pool = [c for c in await store.recall.candidates(chat_id, terms, messages=messages, diary=diary) if c.message_id not in skip]
    if reader is not None and reader.bounded:
        pool = [c for c in pool if reader.reads(c.owner, c.depth)]
    if not pool:
        return []
    on_path = await store.recall.on_path(head_id, sorted({c.message_id for c in pool}))
    ranked = rank([c for c in pool if c.message_id in on_path], now=now, half_life_days=half_life_days, limit=limit)
    user, character = names
    who = {"user": user, "assistant": character, "diary": f"{character}'s diary"}

    def said_by(c: Candidate) -> str:
        if c.role == "assistant" and c.speaker and speakers:
            return speakers.get(c.speaker, character)
        return who.get(c.role, c.role)
    return [Recalled(c.created_at, said_by(c), c.excerpt, score, c.kind, c.message_id, c.depth, c.owner)
            for c, score in ranked]
