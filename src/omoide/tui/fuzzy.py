"""The palette's matcher: whether the letters typed appear in a name in order,
and how well, in time linear in the name's length.

Textual's own fuzzy search tries every way the letters could fall: on a card
named `a a a … a`, ten typed `a`s took minutes and froze the chat. Here a
name matches when the query (spaces ignored) is in it in order; the score
prefers the query as one piece, then letters at the starts of words, then a
short span. Both are cut to a bound (a query past MAX_QUERY letters is read
as its first MAX_QUERY), so no name and no typing can hold up the loop."""

from __future__ import annotations

from dataclasses import dataclass

MAX_QUERY = 48
"""Letters of the query that are matched."""
MAX_TEXT = 256
"""Characters of a name that are searched (palette names are cut to 60 or so)."""


@dataclass(frozen=True, slots=True)
class Match:
    score: float
    """In (0, 1]: higher is better."""
    offsets: tuple[int, ...]
    """Where the query's letters are in the name, for highlighting."""


def _lower(text: str) -> str:
    """`text` lowercased character by character (its offsets stay those of `text`)."""
    return "".join(low if len(low := c.lower()) == 1 else c for c in text)


def _word_start(text: str, i: int) -> bool:
    return i == 0 or (not text[i - 1].isalnum() and text[i].isalnum())


def match(query: str, name: str) -> Match | None:
    """How `query` matches `name`, None when it does not."""
    wanted = _lower("".join(query.split()))[:MAX_QUERY]
    text = _lower(name[:MAX_TEXT])
    if not wanted:
        return None
    whole = text.find(wanted)
    if whole >= 0:
        offsets = tuple(range(whole, whole + len(wanted)))
        return Match(0.9 + (0.1 if _word_start(text, whole) else 0.0), offsets)
    found: list[int] = []
    at = 0
    for letter in wanted:  # the leftmost letters in order: one pass over the name
        i = text.find(letter, at)
        if i < 0:
            return None
        found.append(i)
        at = i + 1
    starts = sum(_word_start(text, i) for i in found)
    span = found[-1] - found[0] + 1
    score = 0.2 + 0.4 * starts / len(found) + 0.2 * len(found) / span
    return Match(min(score, 0.85), tuple(found))
