"""Memories that come to mind: each turn, the passages of this character's
story most relevant to the latest messages come back word for word, with
their dates, in the prompt's volatile tail (after the window).

What is searched: the messages on the path to the head (never another
branch), minus the window (already in the prompt), minus what the speaker did
not witness in a scene (`Reader`). The query is the content words of the
latest messages (the user's new one first), stop words and the speakers'
names left out, at most `recall.MAX_TERMS` of them, and of those the rarest,
while they match at most `MATCH_BUDGET` messages together: then one indexed
FTS5 query, at most `CANDIDATES` rows, and one walk up the path.

Ranking: score = relevance x (0.5 + 0.3 x importance + 0.2 x recency) x voice,
where relevance is the bm25 score over the best candidate's (0..1],
importance the highest importance of a diary entry written at that message
(the default when none) over `HIGH_IMPORTANCE`, recency 0.5^(age / half-life),
and voice 1 for the user's and the other speakers' lines, `OWN_VOICE` for the
character's own replies: the user's statements carry the facts; a reply may
too, so it is kept, a little behind.

By meaning (memory/meaning.py, when static vectors are installed): the
messages nearest the newest one join the candidates, and the best of them
found by meaning alone gets the last place. By a server's embeddings, where it
has them: the best candidates are weighed by meaning (`by_meaning`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, tzinfo
from typing import TYPE_CHECKING

from omoide.domain.chat import Message, Role
from omoide.llm.embeddings import Embed, cosine
from omoide.llm.stamps import stamp
from omoide.memory.meaning import FLOOR
from omoide.memory.recall import MAX_TERMS, query_terms
from omoide.memory.weights import DEFAULT_IMPORTANCE, HIGH_IMPORTANCE

if TYPE_CHECKING:  # the prompt renders passages; it needs no store
    from omoide.domain.witness import Reader
    from omoide.memory.meaning import MeaningIndex
    from omoide.store import Store

QUERY_MESSAGES = 3
"""The latest messages the query is made from: the user's new one and the last reply or two."""
CANDIDATES = 64
"""Full-text matches considered per turn (all branches; the path is checked after)."""
MATCH_BUDGET = 2000
"""Messages the query's words may match together (see `distinctive`)."""
PASSAGE_CHARS = 360
"""A passage longer than this is cut around its first matched word."""
MEANING_POOL = 16
"""The best passages that are weighed by meaning too, when the server has embeddings."""
NEAREST = 16
"""The messages nearest the latest ones by meaning that join the word matches, when vectors are kept (`MeaningIndex`)."""
QUERY_CHARS = 1000
"""What of the newest message is embedded as the query."""
OWN_VOICE = 0.8
"""What the character's own replies weigh against the user's and the others' lines."""
HEADING = "## Memories that come to mind\nEarlier moments of this story, word for word:"


@dataclass(frozen=True, slots=True)
class Passage:
    message_id: int
    when: datetime
    who: str
    text: str
    matched: tuple[str, ...]
    relevance: float
    importance: float
    recency: float
    score: float
    meaning: float | None = None
    """Cosine similarity (0..1) of the passage to the latest messages; None without an embedding source."""

    def line(self, tz: tzinfo | None = None) -> str:
        return f"{stamp(self.when, tz)} {self.who}: {self.text}"

    def why(self, tz: tzinfo | None = None) -> str:
        """Why it came to mind, for /prompt."""
        found = f"matched {', '.join(self.matched)}" if self.matched else "near in meaning"
        return (f"{self.score:.2f}  {stamp(self.when, tz)} {self.who}: {found} "
                f"(relevance {self.relevance:.2f}, importance {self.importance:.2f}, recency {self.recency:.2f}"
                + ("" if self.meaning is None else f", meaning {self.meaning:.2f}") + ")")


def estimate_tokens(text: str) -> int:
    return len(text) // 4 + 1


def passages_text(passages: Sequence[Passage], tz: tzinfo | None = None) -> str:
    """The layer: the passages in the order they were said."""
    if not passages:
        return ""
    ordered = sorted(passages, key=lambda p: (p.when, p.message_id))
    return "\n".join([HEADING, *(p.line(tz) for p in ordered)])


def latest_terms(window: Sequence[Message], names: Sequence[str]) -> list[str]:
    """The query: content words of the latest messages, the newest first."""
    said = [m.content for m in reversed(window) if m.role in (Role.USER, Role.ASSISTANT)][:QUERY_MESSAGES]
    excluded = {w.casefold() for name in names for w in re.findall(r"[^\W_]+", name)}
    terms = [t for t in query_terms("\n".join(said)) if t not in excluded]
    if len(terms) < MAX_TERMS:  # query_terms stops at MAX_TERMS before names are taken out
        more = [t for text in said for t in query_terms(text) if t not in excluded]
        terms = list(dict.fromkeys([*terms, *more]))
    return terms[:MAX_TERMS]


def distinctive(terms: Sequence[str], frequency: Mapping[str, int]) -> list[str]:
    """The rarest of `terms` while the messages they match stay within
    `MATCH_BUDGET` together (and none that match nothing): bm25 ranks every
    match, so this bounds the work whatever the chat's size, and a word found in
    thousands of messages tells none of them apart."""
    kept: list[str] = []
    total = 0
    for term in sorted((t for t in terms if frequency.get(t, 0) > 0), key=lambda t: frequency[t]):
        total += frequency[term]
        if total > MATCH_BUDGET:
            break
        kept.append(term)
    return kept


_WORD = re.compile(r"[^\W_]+")


@functools.lru_cache(maxsize=4 * CANDIDATES)
def _words(text: str) -> frozenset[str]:
    """The words of a message, casefolded: kept for the candidates of the last few turns, which come up again
    (a few turns only: a message may be huge)."""
    return frozenset(map(str.casefold, _WORD.findall(text)))


def words_in(text: str, terms: Sequence[str]) -> tuple[str, ...]:
    present = _words(text)
    return tuple(t for t in terms if t in present)


def cut(text: str, matched: Sequence[str], limit: int = PASSAGE_CHARS) -> str:
    """`text` on one line, at most `limit` characters around its first matched word, cut at word ends."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    lower = flat.casefold()
    first = min((i for i in (lower.find(w) for w in matched) if i >= 0), default=0)
    start = max(0, min(first - limit // 3, len(flat) - limit))
    if start > 0:
        space = flat.find(" ", start)
        start = space + 1 if 0 <= space < first else start
    piece = flat[start : start + limit]
    if start + limit < len(flat) and " " in piece:
        piece = piece[: piece.rfind(" ")]
    return ("…" if start > 0 else "") + piece + ("…" if start + len(piece) < len(flat) else "")


@dataclass(frozen=True, slots=True)
class Voices:
    """Who said what, as the speaker sees it."""

    user: str
    character: str
    """The speaker's name (outside a scene, the chat's character)."""
    me: str | None = None
    """The speaker's id in a scene (None: one-on-one, every reply is its own)."""
    host: str = ""
    """The scene's host: who replies stored without a speaker are."""
    names: Mapping[str, str] | None = None
    """Character id -> name in a scene."""

    def who(self, role: str, speaker: str | None) -> str:
        if role == "user":
            return self.user
        if self.me is None or self.names is None:
            return self.character
        key = speaker or self.host
        return self.names.get(key, key)

    def own(self, role: str, speaker: str | None) -> bool:
        return role == "assistant" and (self.me is None or (speaker or self.host) == self.me)


def with_a_place_for_meaning(ranked: list[Passage], limit: int) -> list[Passage]:
    """`ranked` with the best passage found by meaning alone moved up to the last of
    the `limit` places, when it ranks below them: the word matches keep the places
    before it (a question about two things needs both its lines), and a line that
    shares no word with what was said still gets one."""
    if limit < 2:
        return ranked
    alone = next((i for i, p in enumerate(ranked) if not p.matched), None)
    if alone is None or alone < limit:
        return ranked
    return [*ranked[: limit - 1], ranked[alone], *ranked[limit - 1 : alone], *ranked[alone + 1 :]]


def closeness(cosine: float | None) -> float:
    """A cosine as relevance (0..1): how far above `FLOOR` it is. Not over the nearest
    one's: a weak nearest must not look as sure as the best word match."""
    return 0.0 if cosine is None else max(0.0, (cosine - FLOOR) / (1.0 - FLOOR))


def latest_text(window: Sequence[Message]) -> str:
    """What meaning is measured against: the newest message alone (the words take the
    latest three, each word weighed by its rarity; an average over three would be
    mostly the older two)."""
    said = next((m.content for m in reversed(window) if m.role in (Role.USER, Role.ASSISTANT)), "")
    return " ".join(said.split())[:QUERY_CHARS]


async def by_meaning(scored: list[Passage], window: Sequence[Message], embed: Embed) -> list[Passage]:
    """`scored` (best first) with the best `MEANING_POOL` weighed by their meaning
    close to the newest message; unchanged when no vectors can be had."""
    pool, rest = scored[:MEANING_POOL], scored[MEANING_POOL:]
    vectors = await embed([latest_text(window), *(p.text for p in pool)])
    if vectors is None:
        return scored
    query, *found = vectors
    weighed = []
    for passage, vector in zip(pool, found, strict=True):
        meaning = max(cosine(query, vector), 0.0)
        weighed.append(replace(passage, meaning=meaning, score=passage.score * (0.5 + 0.5 * meaning)))
    weighed.sort(key=lambda p: (-p.score, -p.message_id))
    return [*weighed, *rest]


async def come_to_mind(
    store: Store, chat_id: int, head_id: int, window: Sequence[Message], *, voices: Voices, now: datetime,
    half_life_days: float, limit: int, token_budget: int, reader: Reader | None = None, tz: tzinfo | None = None,
    embed: Embed | None = None, meaning: MeaningIndex | None = None,
) -> list[Passage]:
    """The passages most relevant to the latest messages of `window` (the
    window at `head_id`), best first, at most `limit` and `token_budget` tokens.
    With `meaning`, the `NEAREST` messages by meaning to the newest one are candidates too, their
    relevance their cosine above `FLOOR` (`closeness`; a candidate found both
    ways takes the higher). With `embed`, the `MEANING_POOL` best are weighed by
    meaning: score x (0.5 + 0.5 x meaning)."""
    if limit <= 0 or token_budget <= 0 or not window:
        return []
    names = [voices.user, voices.character, *(voices.names or {}).values()]
    said = latest_terms(window, names)
    terms = distinctive(said, await store.recall.frequencies(said))
    shown = {m.id for m in window}
    pool = [c for c in await store.recall.candidates(chat_id, terms, limit=CANDIDATES, diary=False, whole=True)
            if c.message_id not in shown and c.role in ("user", "assistant")] if terms else []
    near: dict[int, float] = {}
    if meaning is not None:
        near = dict(await meaning.nearest(latest_text(window), before=min(shown), limit=NEAREST))
        by_words = {c.message_id for c in pool}
        pool += await store.recall.messages([i for i in near if i not in by_words])
    if reader is not None and reader.bounded:
        pool = [c for c in pool if reader.reads(None, c.depth)]
    if not pool:
        return []
    on_path = await store.recall.on_path(head_id, sorted(c.message_id for c in pool))
    pool = [c for c in pool if c.message_id in on_path]
    if not pool:
        return []
    importance = await store.recall.importance([c.message_id for c in pool])
    best = max(c.relevance for c in pool) or 1.0
    scored: list[Passage] = []
    for c in pool:
        text = c.text
        matched = words_in(text, terms)
        if not text.strip() or not (matched or c.message_id in near):
            continue
        relevance = max(c.relevance / best, closeness(near.get(c.message_id)))
        weight = (importance.get(c.message_id) or DEFAULT_IMPORTANCE) / HIGH_IMPORTANCE
        recency = 0.5 ** (max((now - c.created_at).total_seconds() / 86400, 0.0) / half_life_days)
        voice = OWN_VOICE if voices.own(c.role, c.speaker) else 1.0
        score = relevance * (0.5 + 0.3 * weight + 0.2 * recency) * voice
        scored.append(Passage(c.message_id, c.created_at, voices.who(c.role, c.speaker), text,
                              matched, relevance, weight, recency, score, near.get(c.message_id)))
    scored.sort(key=lambda p: (-p.score, -p.message_id))
    whole = {p.message_id: p.text for p in scored}

    def trimmed(passage: Passage) -> Passage:
        """The passage cut around its words: only those the choice below reaches (a turn ranks dozens)."""
        return replace(passage, text=cut(whole[passage.message_id], passage.matched))

    if embed is not None and scored:
        scored = await by_meaning([*map(trimmed, scored[:MEANING_POOL]), *scored[MEANING_POOL:]], window, embed)
    scored = with_a_place_for_meaning(scored, limit)
    chosen: list[Passage] = []
    used = estimate_tokens(HEADING)
    for passage in map(trimmed, scored):
        cost = estimate_tokens(passage.line(tz)) + 1
        if used + cost <= token_budget:
            chosen.append(passage)
            used += cost
            if len(chosen) == limit:
                break
    return chosen
