"""An ideal reader of a prompt, and the scoring of answers.

`read(probe, text)` answers a question from a prompt the way a perfect model
would: it finds the evidence wherever it is (card, world, summary, memos,
diary, window, what a recall brought back), picks the newest of an updated
fact by the dates beside it, and answers a time question only when the date
beside an event says it happened on that day. What it answers right is what
the design *kept* within reach of the prompt; the oracle server answers with
it, and every run reports it beside what the model made of the same prompt.

`score(probe, answer)` is containment: the answer holds a word of every
expected group, none of the refused words, or (abstention) declines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from omoide.check.script import ABSTAIN, TIME_EVENTS, Probe

_MONTH_DAY = r"(\d{2})/(\d{2})(?: \d{2}:\d{2})?"
_DATES = re.compile(
    rf"\[{_MONTH_DAY}(?: – {_MONTH_DAY})?\]"  # message stamps, summary and memo spans
    r"|\[(\d{4})-(\d{2})-(\d{2})\]"  # recall results
    r"|^## (\d{2})/(\d{2}) - ",  # diary headings
    re.M,
)
_TODAY = re.compile(r"Current date and time: \w+ (\d{1,2} \w+ \d{4})")
DONT_KNOW = "I don't know; you never told me that."


@dataclass(frozen=True, slots=True)
class Sighting:
    word: str
    position: int
    line: str
    """The words around it: from the date before it (in its line) to the next date."""
    span: tuple[date, date] | None
    """The dates the text beside it says it happened between (None: undated)."""


def today_in(text: str) -> date | None:
    found = _TODAY.search(text)
    if found is None:
        return None
    try:
        return datetime.strptime(found.group(1), "%d %B %Y").date()
    except ValueError:
        return None


def _day(year: int, month: str, day: str, today: date | None) -> date | None:
    try:
        found = date(year, int(month), int(day))
    except ValueError:
        return None
    if today is not None and found > today:  # stamps carry no year: the latest such day not after today
        found = found.replace(year=year - 1)
    return found


def _span(match: re.Match[str], today: date | None) -> tuple[date, date] | None:
    year = today.year if today else date.today().year
    g = match.groups()
    if g[4] is not None:
        first = _day(int(g[4]), g[5], g[6], None)
        return (first, first) if first else None
    if g[7] is not None:
        first = _day(year, g[7], g[8], today)
        return (first, first) if first else None
    start = _day(year, g[0], g[1], today)
    end = _day(year, g[2], g[3], today) if g[2] is not None else start
    return (start, end) if start and end else None


def sightings(text: str, word: str, today: date | None = None) -> list[Sighting]:
    """Every place `word` stands in `text` (casefolded), with the dates nearest
    before it in the same paragraph."""
    folded = text.casefold()
    out = []
    start = 0
    while (at := folded.find(word, start)) >= 0:
        start = at + len(word)
        paragraph = text.rfind("\n\n", 0, at) + 1
        line_start = text.rfind("\n", 0, at) + 1
        line_end = text.find("\n", at)
        line_end = line_end if line_end >= 0 else len(text)
        marks = list(_DATES.finditer(text, paragraph, at))
        begin = max([line_start, *(m.start() for m in marks if m.start() >= line_start)])
        after = _DATES.search(text, at, line_end)
        line = text[begin: after.start() if after else line_end].strip()
        out.append(Sighting(word, at, line, _span(marks[-1], today) if marks else None))
    return out


def read(probe: Probe, text: str) -> str:
    """What a perfect reader of `text` answers to `probe`."""
    today = today_in(text)
    if probe.abstain:
        return DONT_KNOW
    if probe.refuse and not probe.expect:
        leaked = [s for word in probe.refuse for s in sightings(text, word, today)]
        return f"I heard this: {leaked[0].line}" if leaked else DONT_KNOW
    if probe.days_ago is not None:
        return _when(probe.days_ago, text, today)
    candidates = [s for word in (*probe.expect[0], *probe.rivals) for s in sightings(text, word, today)]
    if not candidates:
        return DONT_KNOW
    # The newest by the dates beside it; undated sightings rank by where they stand.
    newest = max(candidates, key=lambda s: ((s.span[1] if s.span else date.min), s.position))
    return f"You told me: {newest.line}"


def _when(days_ago: int, text: str, today: date | None) -> str:
    if today is None:
        return "I can't tell what day it is."
    target = today - timedelta(days=days_ago)
    matching = []
    for word in TIME_EVENTS.values():
        for s in sightings(text, word, today):
            if s.span and s.span[0] <= target <= s.span[1]:
                matching.append(s)
    if not matching:
        return "I don't remember what we did that day."
    narrowest = min((s.span[1] - s.span[0]) for s in matching if s.span)
    words = {s.word for s in matching if s.span and s.span[1] - s.span[0] == narrowest}
    if len(words) > 1:
        return "I'm not sure which of those days it was."
    chosen = next(s for s in matching if s.word in words)
    return f"That day: {chosen.line}"


def score(probe: Probe, answer: str) -> bool:
    folded = answer.casefold()
    if any(word in folded for word in probe.refuse):
        return False
    if probe.abstain:
        return any(phrase in folded for phrase in ABSTAIN)
    return all(any(word in folded for word in group) for group in probe.expect)
