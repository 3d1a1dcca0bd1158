"""The days a message asks about: "on 7 May 2023", "May 7", "three days ago",
"yesterday", "last Sunday". Memories that come to mind bring back what was
said on such a day and the day after it (an event is often told the next day,
"I went ... yesterday"), and the lines of the week after that name the day
themselves (the same phrases, read at the time each was said), so a question
about when finds its answer by its date, not only by its words (LongMemEval's
time-aware queries)."""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta

MONTHS = {m: n for n, m in enumerate(
    "january february march april may june july august september october november december".split(), 1)}
_MONTH = r"(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?" \
         r"|nov(?:ember)?|dec(?:ember)?)"
_DAY_MONTH = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH}\.?,?(?:\s+(\d{{4}}))?\b", re.I)
_MONTH_DAY = re.compile(rf"\b{_MONTH}\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?(?:\s+(\d{{4}}))?\b", re.I)
_ISO = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_NUMBERS = {w: n for n, w in enumerate("zero one two three four five six seven eight nine ten eleven twelve".split())}
_AGO = re.compile(r"\b(\d{1,3}|" + "|".join(_NUMBERS) + r"|a)\s+(day|week)s?\s+ago\b", re.I)
_WEEKDAYS = "monday tuesday wednesday thursday friday saturday sunday".split()
_LAST_WEEKDAY = re.compile(r"\blast\s+(" + "|".join(_WEEKDAYS) + r")\b", re.I)
MAX_DAYS = 4
"""The most days one message asks about."""


def _month(word: str) -> int:
    word = word.casefold()
    return next(n for name, n in MONTHS.items() if name.startswith(word[:3]))


def _day(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


def asked_days(text: str, now: datetime) -> list[date]:
    """The days `text` names, as dates (a day and month with no year: the latest
    such day not after `now`)."""
    today = now.date()
    found: list[date | None] = []
    for m in _DAY_MONTH.finditer(text):
        found.append(_dated(int(m.group(1)), _month(m.group(2)), m.group(3), today))
    for m in _MONTH_DAY.finditer(text):
        found.append(_dated(int(m.group(2)), _month(m.group(1)), m.group(3), today))
    for m in _ISO.finditer(text):
        found.append(_day(int(m.group(1)), int(m.group(2)), int(m.group(3))))
    for m in _AGO.finditer(text):
        count = 1 if m.group(1).casefold() == "a" else int(_NUMBERS.get(m.group(1).casefold(), m.group(1)))
        found.append(today - timedelta(days=count * (7 if m.group(2).casefold() == "week" else 1)))
    if re.search(r"\byesterday\b", text, re.I):
        found.append(today - timedelta(days=1))
    for m in _LAST_WEEKDAY.finditer(text):
        back = (today.weekday() - _WEEKDAYS.index(m.group(1).casefold())) % 7 or 7
        found.append(today - timedelta(days=back))
    return list(dict.fromkeys(d for d in found if d is not None and d <= today))[:MAX_DAYS]


def _dated(day: int, month: int, year: str | None, today: date) -> date | None:
    if year:
        return _day(int(year), month, day)
    this = _day(today.year, month, day)
    return this if this is None or this <= today else _day(today.year - 1, month, day)
