"""Who speaks next in a group scene: a pure function over an injectable random source.

1. A character the message names (by name or nickname) speaks first; the
   earliest name in the text wins.
2. Otherwise one is drawn at random. Each candidate's weight is the product of
   - familiarity with the previous speaker: 1 + FAMILIARITY_PULL * f, where f
     (in [0, 1)) already has diminishing returns (each shared conversation
     closes a share of the gap to 1), so the pull grows with every
     conversation but never beyond 1 + FAMILIARITY_PULL;
   - how long since it spoke: 1 + min(turns, RECENCY_CAP) (never spoken: the cap),
     so whoever has been quiet longest is likelier, and the previous speaker
     does not answer itself unless no one else is there.
The reason is kept for /prompt.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

FAMILIARITY_PULL = 3.0
RECENCY_CAP = 4

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Candidate:
    key: str
    name: str
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Choice:
    key: str
    name: str
    reason: str
    weights: Mapping[str, float] = field(default_factory=dict)


def addressed(text: str, candidates: Sequence[Candidate]) -> Candidate | None:
    """The candidate named earliest in `text`, if any."""
    best: tuple[int, Candidate] | None = None
    for candidate in candidates:
        for name in (candidate.name, *candidate.aliases):
            if not name.strip():
                continue
            found = re.search(rf"(?<!\w){re.escape(name.strip())}(?!\w)", text, flags=re.IGNORECASE)
            if found and (best is None or found.start() < best[0]):
                best = (found.start(), candidate)
    return best[1] if best else None


def weight(familiarity: float, turns_since: int | None) -> float:
    f = min(max(familiarity, 0.0), 1.0)
    quiet = RECENCY_CAP if turns_since is None else min(turns_since, RECENCY_CAP)
    return (1.0 + FAMILIARITY_PULL * f) * (1.0 + quiet)


def choose(
    candidates: Sequence[Candidate],
    *,
    rng: random.Random,
    text: str = "",
    previous: str | None = None,
    previous_name: str = "",
    familiarity: Mapping[str, float] | None = None,
    turns_since: Mapping[str, int] | None = None,
) -> Choice:
    """Pick the next speaker. `familiarity[key]` is how well `key` knows the
    previous speaker; `turns_since[key]` how many messages ago it last spoke
    (absent: not in this scene yet)."""
    if not candidates:
        raise ValueError("no one to speak")
    named = addressed(text, candidates) if text else None
    if named is not None:
        return Choice(named.key, named.name, f"{named.name} was named in the message")
    pool = [c for c in candidates if c.key != previous] or list(candidates)
    familiarity = familiarity or {}
    turns_since = turns_since or {}
    weights = {c.key: weight(familiarity.get(c.key, 0.0), turns_since.get(c.key)) for c in pool}
    if len(pool) == 1:
        only = pool[0]
        why = "the only one here" if len(candidates) == 1 else f"the only one here besides {previous_name or 'the last speaker'}"
        return Choice(only.key, only.name, f"{only.name} is {why}", weights)
    picked = rng.choices(pool, weights=[weights[c.key] for c in pool])[0]
    total = sum(weights.values())

    def part(c: Candidate) -> str:
        since = turns_since.get(c.key)
        quiet = "not yet spoken" if since is None else f"spoke {since} message(s) ago"
        return f"{c.name} {weights[c.key] / total:.0%} (familiarity with {previous_name or 'the last speaker'} " \
               f"{familiarity.get(c.key, 0.0):.2f}, {quiet})"

    return Choice(picked.key, picked.name, "drawn at random, weighted: " + "; ".join(part(c) for c in pool), weights)


def turns_since(speakers: Sequence[str]) -> dict[str, int]:
    """From the speakers of the path's messages, oldest first: how many messages
    ago each last spoke (1 = the newest message)."""
    out: dict[str, int] = {}
    for back, key in enumerate(reversed(speakers), start=1):
        out.setdefault(key, back)
    return out


def gossip_target(absent: Callable[[], Sequence[T]], rate: float, rng: random.Random) -> T | None:
    """With probability `rate`, one absent character for the conversation to bring
    up. `absent` is asked only then: a library can hold thousands."""
    if rate <= 0 or rng.random() >= rate:
        return None
    found = absent()
    return rng.choice(found) if found else None
