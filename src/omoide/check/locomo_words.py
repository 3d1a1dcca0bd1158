"""The words and days of a LoCoMo conversation, for its conversion into a
scenario (locomo.py): content words, their plural and tense endings, the
sessions' dates, the one day a temporal answer names, the phrases that name
one day from the day they are said, and the questions' categories."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import date, datetime, timedelta
from typing import Any

CATEGORY_NAMES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
"""LoCoMo's categories, numbered as in its own evaluation code."""


def category_of(qa: Mapping[str, Any]) -> str:
    """A question's category name; "unknown" for a number not in `CATEGORY_NAMES`, or none."""
    found = re.fullmatch(r"\s*(\d+)\s*", str(qa.get("category", "")))
    return CATEGORY_NAMES.get(int(found.group(1)), "unknown") if found else "unknown"

STOPWORDS = frozenset("""
a about above after again against all also am an and any are aren't as at be because been before being below
between both but by can can't cannot could couldn't did didn't do does doesn't doing don't down during each few
for from further get gets got had hadn't has hasn't have haven't having he he'd he'll he's her here here's hers
herself him himself his how how's i i'd i'll i'm i've if in into is isn't it it's its itself just let's like me
more most much my myself no nor not now of off on once only or other ought our ours ourselves out over own really
same she she'd she'll she's should shouldn't so some such than that that's the their theirs them themselves then
there there's these they they'd they'll they're they've this those through to too under until up very was wasn't
we we'd we'll we're we've were weren't what what's when when's where where's which while who who's whom why why's
will with won't would wouldn't yeah yes yet you you'd you'll you're you've your yours yourself yourselves
oh hey hi wow thanks thank lot lots well also still even ever one thing things something anything everything
""".split())

_WORD = re.compile(r"[^\W_](?:[\w'’-]*[^\W_])?")
_MONTHS = {m: n for n, m in enumerate(
    "january february march april may june july august september october november december".split(), 1)}
_WEEKDAYS = "monday tuesday wednesday thursday friday saturday sunday".split()
_NUMBERS = {w: n for n, w in enumerate("zero one two three four five six seven eight nine ten".split())}


def words(text: str) -> list[str]:
    """The words of `text`, casefolded, a possessive ending dropped."""
    out = []
    for w in _WORD.findall(text.casefold().replace("’", "'")):
        out.append(w[:-2] if w.endswith("'s") else w)
    return out


def content(text: str, names: Iterable[str] = ()) -> list[str]:
    """The words that carry meaning: not function words, not the speakers' names,
    three letters at least (or a number)."""
    skip = STOPWORDS | {n.casefold() for n in names}
    seen: dict[str, None] = {}
    for w in words(text):
        if w not in skip and (len(w) >= 3 or w.isdigit()):
            seen.setdefault(w, None)
    return list(seen)


def stem(word: str) -> str:
    """A word without its plural or tense ending, enough to meet "agency" in
    "agencies" and "paint" in "painted"."""
    for ending, keep in (("ies", "y"), ("ied", "y"), ("ing", ""), ("es", ""), ("ed", ""), ("s", "")):
        if word.endswith(ending) and len(word) - len(ending) >= 3:
            return word[: -len(ending)] + keep
    return word


def match_in(word: str, turn_words: Sequence[str]) -> str | None:
    """The turn's own form of `word`, or None when the turn does not say it."""
    if word in turn_words:
        return word
    target = stem(word)
    return next((w for w in turn_words if stem(w) == target), None)


def parse_when(text: str) -> datetime | None:
    """A session's "1:56 pm on 8 May, 2023"."""
    found = re.search(r"(\d{1,2}) (\w+),? (\d{4})", text)
    if found is None or found.group(2).casefold() not in _MONTHS:
        return None
    return datetime(int(found.group(3)), _MONTHS[found.group(2).casefold()], int(found.group(1)))


def answer_day(answer: str) -> date | None:
    """The one day a temporal answer names ("7 May 2023", "19 January, 2023",
    "The Friday before 15 July 2023"), or None (a month, a year, a week...)."""
    text = answer.strip().casefold()
    weekday = re.fullmatch(r"(?:the |on )?(\w+) before (.+)", text)
    if weekday and weekday.group(1) in _WEEKDAYS:
        base = answer_day(weekday.group(2))
        if base is None:
            return None
        back = (base.weekday() - _WEEKDAYS.index(weekday.group(1))) % 7 or 7
        return base - timedelta(days=back)
    found = re.fullmatch(r"(?:on )?(\d{1,2}) (\w+),? (\d{4})", text) or None
    if found and found.group(2) in _MONTHS:
        try:
            return date(int(found.group(3)), _MONTHS[found.group(2)], int(found.group(1)))
        except ValueError:
            return None
    found = re.fullmatch(r"(?:on )?(\w+) (\d{1,2}),? (\d{4})", text)
    if found and found.group(1) in _MONTHS:
        try:
            return date(int(found.group(3)), _MONTHS[found.group(1)], int(found.group(2)))
        except ValueError:
            return None
    return None


def relative_phrases(said: date) -> list[tuple[str, int]]:
    """The phrases that name one day from the day they are said, and how many
    days before it that day is."""
    phrases = [("the day before yesterday", 2), ("yesterday", 1), ("last night", 1), ("today", 0),
               ("this morning", 0), ("tonight", 0)]
    for n in range(2, 11):
        for number in (str(n), *(w for w, v in _NUMBERS.items() if v == n)):
            phrases.append((f"{number} days ago", n))
    for index, name in enumerate(_WEEKDAYS):
        back = (said.weekday() - index) % 7 or 7
        phrases.append((f"last {name}", back))
    return phrases
