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

Ranking: score = relevance x (0.5 + 0.3 x importance + 0.2 x recency),
where relevance is the bm25 score over the best candidate's (0..1],
importance the highest importance of a diary entry written at that message
(the default when none) over `HIGH_IMPORTANCE`, and recency 0.5^(age /
half-life). Who said it does not weigh: what the character tells of herself
is asked back as often as what the user tells.

Each passage comes with the line it completes (`beside`): a question with the
answer after it, an answer or a line that points back ("It was her.") with
the line before it, so a value never comes back without what it is.
Lines that name what the best matches name ("home country") come too
(memory/links.py). The budget is a share of the context (`recall_passages_percent`).

Plain retrieval (`plain`, the memory check's `search` baseline): bm25 over
whole messages for the newest one alone and the messages nearest it by
meaning, nothing beside, no weights: what a peer's hybrid retrieval gives.

By meaning (memory/meaning.py, when static vectors are installed): the
messages nearest the newest one join the candidates, and the best of them
found by meaning alone gets the last place. By a server's embeddings, where it
has them: the best candidates are weighed by meaning (`by_meaning`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime, time, timedelta, tzinfo
from typing import TYPE_CHECKING

from omoide.domain.chat import Message, Role
from omoide.llm.embeddings import Embed, cosine
from omoide.memory.beside import answers, beside
from omoide.memory.passage import PASSAGE_CHARS, Passage, Voices, cut, estimate_tokens, readable, stem
from omoide.memory.days import asked_days
from omoide.memory.links import linked
from omoide.memory.meaning import FLOOR
from omoide.memory.recall import MAX_TERMS, query_terms
from omoide.memory.weights import DEFAULT_IMPORTANCE, HIGH_IMPORTANCE

if TYPE_CHECKING:  # the prompt renders passages; it needs no store
    from omoide.domain.witness import Reader
    from omoide.memory.meaning import MeaningIndex
    from omoide.store import Store
    from omoide.store.recall import Candidate

QUERY_MESSAGES = 3
"""The latest messages the query is made from: the user's new one and the last reply or two."""
CANDIDATES = 64
"""Full-text matches considered per turn (all branches; the path is checked after)."""
MATCH_BUDGET = 2000
"""Messages the query's words may match together (see `distinctive`)."""
MEANING_POOL = 16
"""The best passages that are weighed by meaning too, when the server has embeddings."""
NEAREST = 16
"""The messages nearest the latest ones by meaning that join the word matches, when vectors are kept (`MeaningIndex`)."""
DAYS_AFTER = 1
"""A day asked about brings back what was said on it and this many days after (told the next day: "yesterday")."""
DAY_CANDIDATES = 80
"""The most messages of the days asked about that are considered."""
TOLD_WITHIN = 7
"""A line said this many days after a day asked about comes back too when it names that day ("two days ago",
"last Monday", "on 10 July")."""
LATER_CANDIDATES = 400
"""The most messages of those later days that are read for a day they name."""
DAY_WEIGHT = 0.5
"""What being said on a day asked about weighs, before any word it shares with the question."""
EXCHANGE_WEIGHT = 0.3
"""What a match of the latest exchange's words weighs against one of the newest message's own."""
MEANING_WEIGHT = 0.6
"""What a message near in meaning alone weighs against the best word match (static vectors average words)."""
BESIDE_POOL = 2
"""How many times `limit` of the best passages have the lines they complete looked up."""
QUERY_CHARS = 1000
"""What of the newest message is embedded as the query."""
HEADING = "## Memories that come to mind\nEarlier moments of this story, word for word:"


def passages_text(passages: Sequence[Passage], tz: tzinfo | None = None) -> str:
    """The layer: the passages in the order they were said."""
    if not passages:
        return ""
    ordered = sorted(passages, key=lambda p: (p.when, p.message_id))
    return "\n".join([HEADING, *(p.line(tz) for p in ordered)])


_WORD = re.compile(r"[^\W_]+")


def name_words(names: Sequence[str]) -> set[str]:
    """The words of the speakers' names, casefolded: what neither the query's words nor its meaning take."""
    return {w.casefold() for name in names for w in _WORD.findall(name)}


def latest_terms(window: Sequence[Message], names: Sequence[str]) -> list[str]:
    """The query: content words of the latest messages, the newest first."""
    said = [m.content for m in reversed(window) if m.role in (Role.USER, Role.ASSISTANT)][:QUERY_MESSAGES]
    excluded = name_words(names)
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


@functools.lru_cache(maxsize=4 * CANDIDATES)
def _words(text: str) -> frozenset[str]:
    """The words of a message, casefolded: kept for the candidates of the last few turns, which come up again
    (a few turns only: a message may be huge)."""
    return frozenset(map(str.casefold, _WORD.findall(text)))


def words_in(text: str, terms: Sequence[str]) -> tuple[str, ...]:
    present = _words(text)
    return tuple(t for t in terms if t in present or any(w.startswith(stem(t)) for w in present))


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


def latest_text(window: Sequence[Message], names: Sequence[str] = ()) -> str:
    """What meaning is measured against: the newest message alone (the words take the
    latest three, each word weighed by its rarity; an average over three would be
    mostly the older two), less the speakers' names, which the words leave out too:
    in an average of a few words a name weighs as much as what is asked, and
    brings every "Hey Suzune!" nearer."""
    said = next((m.content for m in reversed(window) if m.role in (Role.USER, Role.ASSISTANT)), "")
    excluded = name_words(names)
    if excluded:
        said = _WORD.sub(lambda found: "" if found.group().casefold() in excluded else found.group(), said)
    return " ".join(said.split())[:QUERY_CHARS]


async def by_meaning(scored: list[Passage], asked: str, embed: Embed) -> list[Passage]:
    """`scored` (best first) with the best `MEANING_POOL` weighed by their meaning
    close to `asked` (`latest_text`); unchanged when no vectors can be had."""
    pool, rest = scored[:MEANING_POOL], scored[MEANING_POOL:]
    vectors = await embed([asked, *(p.text for p in pool)])
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
    embed: Embed | None = None, meaning: MeaningIndex | None = None, plain: bool = False,
) -> list[Passage]:
    """The passages most relevant to the latest messages of `window` (the
    window at `head_id`), best first, each followed by the line it completes,
    at most `limit` passages and `token_budget` tokens with those lines.
    The words of the newest message are matched on their own too, so what was
    just asked outweighs the reply before it. With `meaning`, the `NEAREST`
    messages by meaning to the newest one are candidates too, their relevance
    their cosine above `FLOOR` (`closeness`; a candidate found both ways takes
    the higher). With `embed`, the `MEANING_POOL` best are weighed by meaning:
    score x (0.5 + 0.5 x meaning). `plain`: bm25 of the newest message's words and
    its nearest by meaning, unweighted, nothing beside."""
    if limit <= 0 or token_budget <= 0 or not window:
        return []
    names = [voices.user, voices.character, *(voices.names or {}).values()]
    newest = latest_terms(window[-1:], names)
    said = list(dict.fromkeys([*newest, *latest_terms(window, names)]))
    frequency = await store.recall.frequencies(said, at_most=MATCH_BUDGET + 1)  # more tells `distinctive` nothing
    shown = {m.id for m in window}
    relevance: dict[int, float] = {}
    pool: dict[int, Candidate] = {}
    queries = [(newest, 1.0)] if plain else [(newest, 1.0), (said, EXCHANGE_WEIGHT)]
    for words, weight in queries:
        terms = distinctive(words, frequency)
        found = [c for c in await store.recall.candidates(chat_id, terms, limit=CANDIDATES, diary=False, whole=True)
                 if c.message_id not in shown and c.role in ("user", "assistant")] if terms else []
        best = max((c.relevance for c in found), default=0.0) or 1.0
        for c in found:
            pool.setdefault(c.message_id, c)
            relevance[c.message_id] = max(relevance.get(c.message_id, 0.0), weight * c.relevance / best)
    terms = distinctive(said, frequency)
    near: dict[int, float] = {}
    asked = latest_text(window, () if plain else names)  # plain embeds the message as a peer's retrieval would
    if meaning is not None and _WORD.search(asked):  # ("Suzune?" alone asks nothing of meaning)
        near = dict(await meaning.nearest(asked, before=min(shown), limit=NEAREST * (8 if plain else 1)))
        for c in await store.recall.messages([i for i in near if i not in pool]):
            pool[c.message_id] = c
    on_day: set[int] = set()
    if not plain:
        for day in asked_days(window[-1].content, now):
            start = datetime.combine(day, time(), now.tzinfo)
            near_day = await store.recall.said_between_times(chat_id, start, start + timedelta(days=DAYS_AFTER + 1),
                                                             limit=DAY_CANDIDATES)
            later = await store.recall.said_between_times(chat_id, start + timedelta(days=DAYS_AFTER + 1),
                                                          start + timedelta(days=TOLD_WITHIN + 1), limit=LATER_CANDIDATES)
            for c in [*near_day, *(c for c in later if day in asked_days(c.text, c.created_at.astimezone(now.tzinfo)))]:
                if c.message_id not in shown:
                    pool.setdefault(c.message_id, c)
                    on_day.add(c.message_id)
    candidates = [c for c in pool.values() if readable(c, reader)]
    if not candidates:
        return []
    on_path = await store.recall.on_path(head_id, sorted(c.message_id for c in candidates))
    candidates = [c for c in candidates if c.message_id in on_path]
    if not candidates:
        return []
    follows: dict[int, int] = {}
    if not plain:
        candidates += await answers(store, head_id, candidates, relevance, shown, reader, follows)
    importance = {} if plain else await store.recall.importance([c.message_id for c in candidates])

    def recency_of(c: Candidate) -> float:
        return float(0.5 ** (max((now - c.created_at).total_seconds() / 86400, 0.0) / half_life_days))

    def naming(c: Candidate, fit: float, pair: str) -> Passage:
        """A line that names what a better passage names (memory/links.py), at the default importance."""
        weight, recency = DEFAULT_IMPORTANCE / HIGH_IMPORTANCE, recency_of(c)
        return Passage(c.message_id, c.created_at, voices.who(c.role, c.speaker), cut(c.text, pair.split()), (), fit,
                       weight, recency, fit * (0.5 + 0.3 * weight + 0.2 * recency), names=pair)

    scored: list[Passage] = []
    for c in candidates:
        text = c.text
        matched = words_in(text, terms)
        if c.message_id in follows:
            matched = words_in(pool[follows[c.message_id]].text, terms)
        elif not text.strip() or not (matched or c.message_id in near or c.message_id in on_day):
            continue
        fit = max(relevance.get(c.message_id, 0.0), MEANING_WEIGHT * closeness(near.get(c.message_id)))
        if c.message_id in on_day:  # said on a day the newest message asks about
            fit = DAY_WEIGHT + (1 - DAY_WEIGHT) * fit
        weight = (importance.get(c.message_id) or DEFAULT_IMPORTANCE) / HIGH_IMPORTANCE
        recency = recency_of(c)
        # Plain: the word matches by bm25, then what is nearest by meaning fills what room is left
        score = (1.0 + relevance[c.message_id] if c.message_id in relevance else fit) if plain \
            else fit * (0.5 + 0.3 * weight + 0.2 * recency)
        scored.append(Passage(c.message_id, c.created_at, voices.who(c.role, c.speaker), text,
                              matched, fit, weight, recency, score, near.get(c.message_id),
                              follows=follows.get(c.message_id), on_day=c.message_id in on_day))
    scored.sort(key=lambda p: (-p.score, -p.message_id))
    whole = {p.message_id: p.text for p in scored}

    def trimmed(passage: Passage) -> Passage:
        """The passage cut around its words: only those the choice below reaches (a turn ranks dozens)."""
        return replace(passage, text=cut(whole[passage.message_id], passage.matched))

    if embed is not None and scored and not plain:
        scored = await by_meaning([*map(trimmed, scored[:MEANING_POOL]), *scored[MEANING_POOL:]], asked, embed)
    ranked = [trimmed(p) for p in with_a_place_for_meaning(scored, limit)[: None if plain else BESIDE_POOL * limit]]
    if not plain:  # a line found that names what a better passage names weighs as that (memory/links.py)
        named = {p.message_id: p for p in await linked(store, chat_id, head_id, ranked, shown, name_words(names),
                                                      reader, naming)}
        kept = {p.message_id: p for p in ranked if p.score >= named.get(p.message_id, p).score}
        ranked = sorted({**named, **kept}.values(), key=lambda p: (-p.score, -p.message_id))
    companions = {} if plain else await beside(store, head_id, ranked, shown, voices, reader)
    chosen: list[Passage] = []
    taken: set[int] = set()
    used = estimate_tokens(HEADING)
    for passage in ranked:
        if passage.message_id in taken:
            continue
        unit = [passage, *(c for c in companions.get(passage.message_id, []) if c.message_id not in taken)]
        costs = [estimate_tokens(line.line(tz)) + 1 for line in unit]
        if used + sum(costs) > token_budget:  # the passage alone, then, if it fits
            unit, costs = unit[:1], costs[:1]
        if used + costs[0] > token_budget:
            continue
        chosen += unit
        taken |= {line.message_id for line in unit}
        used += sum(costs)
        if not plain and sum(line.completes is None for line in chosen) == limit:  # plain fills its tokens
            break
    return chosen
