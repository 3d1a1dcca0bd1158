"""Lines that name what the best memories name (memory/passages.py): two words
side by side in one of the best word matches that stand together in only a
few other messages of the story ("home country", "pottery class", "Ashby
marina") name one thing, and the other lines that name it are about it too,
though they share no word with what was asked ("I moved from my home country
four years ago" -> "a gift from my grandma in my home country, Sweden")."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from omoide.memory.passage import Passage, readable, stem
from omoide.memory.weights import STOPWORDS

if TYPE_CHECKING:
    from omoide.domain.witness import Reader
    from omoide.store import Store
    from omoide.store.recall import Candidate

LINKED_FROM = 2
"""The best word matches whose pairs of words are followed."""
PAIRS_EACH = 8
"""The pairs of a passage looked up, the nearest its matched words first (each is counted over the whole story)."""
PAIR_AT_MOST = 4
"""A pair of words in more messages than this names nothing in particular."""
LINK_WEIGHT = 0.6
"""What a line that names the same thing weighs against the passage that named it."""
_WORD = re.compile(r"[^\W_]+")


def _content(word: str, excluded: set[str]) -> bool:
    return len(word) >= 3 and not word.isdigit() and word not in STOPWORDS and word not in excluded


def pairs(text: str, excluded: set[str], matched: Sequence[str] = ()) -> list[str]:
    """Two content words side by side ("home country"), casefolded: no stop word, no number and none of `excluded`
    (the speakers' names); in order, or the nearest a word of `matched` (or a form of it) first."""
    words = [w.casefold() for w in _WORD.findall(text)]
    hits = [i for i, w in enumerate(words) if any(w.startswith(stem(m)) for m in matched)]
    found = [(min((abs(i - h) for h in hits), default=0), f"{a} {b}")
             for i, (a, b) in enumerate(zip(words, words[1:])) if _content(a, excluded) and _content(b, excluded)]
    return list(dict.fromkeys(pair for _, pair in sorted(found, key=lambda f: f[0])))


async def linked(store: Store, chat_id: int, head_id: int, ranked: Sequence[Passage], taken: set[int],
                 excluded: set[str], reader: Reader | None,
                 make: Callable[[Candidate, float, str], Passage]) -> list[Passage]:
    """The lines on the path that hold a pair of words of one of the `LINKED_FROM` best
    word matches of `ranked` which at most `PAIR_AT_MOST` messages hold, none of
    `taken`: each made by `make(line, fit, pair)`, its fit `LINK_WEIGHT` of the
    passage's that named the pair."""
    named: dict[str, Passage] = {}
    best = [p for p in ranked if p.matched][:LINKED_FROM]
    taken = taken | {p.message_id for p in best}
    for passage in best:
        for pair in pairs(passage.text, excluded, passage.matched)[:PAIRS_EACH]:
            named.setdefault(pair, passage)  # a pair two of them hold is the better one's
    if not named:
        return []
    counts = await store.recall.frequencies(list(named), at_most=PAIR_AT_MOST + 1)
    rare = [pair for pair in named if 2 <= counts.get(pair, 0) <= PAIR_AT_MOST]  # the passage's own, and another's
    if not rare:
        return []
    found = [c for c in await store.recall.candidates(chat_id, rare, limit=PAIR_AT_MOST * len(rare), diary=False,
                                                      whole=True)
             if c.message_id not in taken and c.role in ("user", "assistant") and readable(c, reader)]
    on_path = await store.recall.on_path(head_id, sorted({c.message_id for c in found})) if found else set()
    out: list[Passage] = []
    for c in found:
        held = set(pairs(c.text, excluded))  # the index stems: "home countries" is not the pair
        shared = next((p for p in rare if p in held), None)
        if c.message_id in on_path and shared is not None:  # the index gives each message once
            out.append(make(c, LINK_WEIGHT * named[shared].relevance, shared))
    return out
