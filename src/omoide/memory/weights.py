"""How much a memory (a diary entry, a memo) matters now: importance, decay,
mentions, and the weighted choice of diary lines for the prompt. Pure functions; the clock is an argument.

strength = importance x 0.5^(age / half_life)
         + sum over its mentions of MENTION_BOOST x 0.5^(mention age / half_life)

A *mention* is a later message on the same path that brings the memory up
again: it shares at least two of the memory's keywords (or its only one).
Keywords are the words of four letters or more, lower-cased, with a plural or
past-tense ending trimmed, minus common words and the two names in the chat
(which would match everything)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from functools import lru_cache

from omoide.domain.chat import DiaryEntry, Memo, Mention

DEFAULT_IMPORTANCE = 3
"""For entries written without one (and for rows older than weights)."""
HIGH_IMPORTANCE = 5
"""What `/remember !` gives."""
KEEP_VERBATIM = 4
"""Entries at least this important survive diary compression word for word."""
MENTION_BOOST = 1.0
"""What one mention adds to a memory's strength, decaying from when it was made."""

STOPWORDS = frozenset("""
about above after again against also because been before being below between both came come could does doing done down
during each even ever every from further have having here hers herself himself into just know like made make many more
most much must myself never only other ours ourselves over really said same says should since some still such than that
their theirs them themselves then there these they thing things think this those though through today told tomorrow
under until very want wants well went were what when where which while will with would your yours yourself yourselves
yesterday going gonna little maybe back time good feel felt look looked looks okay yeah right away something anything
recently lately ago soon earlier later currently nowadays
the and was are you for but not his her she him had has who why how can did our out its all any one too yes get got
""".split())
"""Words that never identify a memory (the short ones matter to recall queries)."""

_WORD = re.compile(r"[^\W\d_]{4,}", re.UNICODE)


def _stem(word: str) -> str:
    for suffix in ("'s", "ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[: -len(suffix)]
    return word


def keywords(text: str, *, exclude: Iterable[str] = ()) -> frozenset[str]:
    """The words that identify a memory (see the module docstring)."""
    return _keywords(text, tuple(exclude))


@lru_cache(maxsize=4096)  # a diary entry is checked against every new message
def _keywords(text: str, exclude: tuple[str, ...]) -> frozenset[str]:
    names = {_stem(n.casefold()) for name in exclude for n in _WORD.findall(name)}
    words = {_stem(w.casefold()) for w in _WORD.findall(text)}
    return frozenset(w for w in words if w not in STOPWORDS and w not in names)


def mentioned(text: str, memories: Sequence[tuple[int, str]], *, exclude: Iterable[str] = ()) -> list[int]:
    """The ids of the memories (id, text) that `text` brings up again."""
    names = list(exclude)
    said = keywords(text, exclude=names)
    found = []
    for memory_id, content in memories:
        own = keywords(content, exclude=names)
        if own and len(own & said) >= min(2, len(own)):
            found.append(memory_id)
    return found


def _decay(age_days: float, half_life_days: float) -> float:
    return float(0.5 ** (max(age_days, 0.0) / half_life_days))


def _days(later: datetime, earlier: datetime) -> float:
    return (later - earlier).total_seconds() / 86400


def strength(importance: int | None, written: datetime, mentions: Iterable[datetime], *, now: datetime, half_life_days: float) -> float:
    base = (importance or DEFAULT_IMPORTANCE) * _decay(_days(now, written), half_life_days)
    return base + sum(MENTION_BOOST * _decay(_days(now, moment), half_life_days) for moment in mentions if moment <= now)


def strengths(entries: Sequence[DiaryEntry], mentions: Sequence[Mention], *, now: datetime, half_life_days: float) -> dict[int, float]:
    """Entry id -> strength at `now`; mentions made after `now` do not count yet."""
    times: dict[int, list[datetime]] = {}
    for mention in mentions:
        if mention.kind == "diary":
            times.setdefault(mention.memory_id, []).append(mention.created_at)
    return {
        e.id: strength(e.importance, e.created_at, times.get(e.memory_id, ()), now=now, half_life_days=half_life_days)
        for e in entries
    }


def memo_strengths(memos: Sequence[Memo], mentions: Sequence[Mention], *, now: datetime, half_life_days: float) -> dict[int, float]:
    """Memo id -> strength at `now`: a memo has the default importance and ages
    from the last message of its batch (or from when you wrote it)."""
    times: dict[int, list[datetime]] = {}
    for mention in mentions:
        if mention.kind == "memo":
            times.setdefault(mention.memory_id, []).append(mention.created_at)
    return {
        m.id: strength(None, m.last_at or m.created_at, times.get(m.id, ()), now=now, half_life_days=half_life_days)
        for m in memos
    }


def memo_text(memo: Memo) -> str:
    return " ".join(memo.highlights)


def entry_lines(entry: DiaryEntry) -> int:
    """Lines an entry takes in the prompt's diary block (its heading included)."""
    return len(entry.as_markdown().strip().splitlines())


def select_weighted(
    entries: Sequence[DiaryEntry], strength_of: Mapping[int, float], limit: int,
    *, lines: Callable[[DiaryEntry], int] = entry_lines,
) -> list[DiaryEntry]:
    """The entries that enter the prompt when they hold more than `limit` lines:
    the strongest first (the newer on a tie), each one that still fits, then put
    back in date order. Whole entries only; `lines` says what one costs."""
    if sum(lines(e) for e in entries) <= limit:
        return list(entries)
    position = {e.id: i for i, e in enumerate(entries)}
    ranked = sorted(entries, key=lambda e: (-strength_of.get(e.id, 0.0), -position[e.id]))
    chosen: list[DiaryEntry] = []
    used = 0
    for entry in ranked:
        cost = lines(entry)
        if used + cost <= limit:
            chosen.append(entry)
            used += cost
    return sorted(chosen, key=lambda e: (e.created_at, position[e.id]))
