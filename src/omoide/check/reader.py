"""An ideal reader of a prompt, and the scoring of answers.

`kept(question, text, scenario)` says whether a perfect reader of `text` (the
prompt sent, less the character's own earlier replies, plus what the recall
tool brought back) could answer right: every fact the question needs stands in
a *statement* (a sentence not ending in "?") holding a word of each of the
fact's evidence groups; an updated fact's newest telling outdates the old one
by the dates beside them; a time question is answered only when the dates
beside an event say which day it was (and a relative phrase, "last weekend",
is kept beside it when the event was not the day of its telling).

`score(question, answer, scenario)` is strict containment that a guesser cannot
game: the answer must hold the value and every `also` group, and must not name
a stale value as current, a distractor, a word it must refuse, or any other
value of the story that the question did not name itself. So "Biscuit? Comet?
Berlin? I don't know." is wrong for every question.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from functools import lru_cache

from omoide.check.scenario import Fact, Question, Scenario
from omoide.check.sources import speaker_names

ABSTAIN = (
    "don't know", "do not know", "didn't tell", "did not tell", "never told", "haven't told", "have not told",
    "never mentioned", "didn't mention", "did not mention", "haven't mentioned", "not sure", "no idea",
    "don't remember", "do not remember", "can't remember", "cannot remember", "don't recall", "can't recall",
    "you never said", "haven't said", "not something you've told", "wouldn't know", "no clue",
)
"""Words of an answer that declines to invent one (casefolded containment)."""

PAST_MARKERS = ("not ", "no longer", "used to", "from ", "until", "formerly", "instead of", "anymore", "any more",
                "misspoke", "was wrong", "before", "previously", "old ")
"""Words near a stale value that say it is no longer so ("not London anymore")."""

DONT_KNOW = "I don't know; you never told me that."

_MONTH_DAY = r"(\d{2})/(\d{2})(?: \d{2}:\d{2})?"
_DATES = re.compile(
    rf"\[{_MONTH_DAY}(?: – {_MONTH_DAY})?\]"  # message stamps, summary and memo spans
    r"|\[(\d{4})-(\d{2})-(\d{2})\]"  # recall results
    r"|^## (\d{2})/(\d{2}) - ",  # diary headings
    re.M,
)
_TODAY = re.compile(r"Current date and time: \w+ (\d{1,2} \w+ \d{4})")
_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+|\n")


@lru_cache(maxsize=4096)
def _word(word: str) -> re.Pattern[str]:
    """A value as a whole word, or with a plural or possessive ending ('kite'
    finds 'kites' and "kite's"; 'come' not 'comet', 'ana' not 'banana')."""
    return re.compile(r"(?<![\w])" + re.escape(word) + r"(?:s|es|'s|’s)?(?![\w])")


@lru_cache(maxsize=4096)
def _start(word: str) -> re.Pattern[str]:
    """A word at a word's start: the words that say what a value is may be
    stems ('translat' finds 'translating' and 'translator')."""
    return re.compile(r"(?<![\w])" + re.escape(word))


def names(text: str, word: str) -> bool:
    """`text` names the value `word` (a whole word: reader._word)."""
    return _word(word).search(text) is not None


def starts(text: str, word: str) -> bool:
    return _start(word).search(text) is not None


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


@dataclass(frozen=True, slots=True)
class Statement:
    text: str
    """The sentence, casefolded."""
    line: str
    """Its line from the date before it (casefolded): who said it, and the words around."""
    position: int
    span: tuple[date, date] | None
    """The days the dates beside it say it was told between (None: undated)."""
    context: str = ""
    """It and the sentences just before and after it (casefolded)."""
    speaker: str = ""
    """Who the text says said it ("Kai said: ...", "Kai: ..."), casefolded; '' when it does not say."""


_ROLE = re.compile(r"<(?:user|assistant|system|tool)>")
"""A message's start in a rendered prompt (memory/prompt/model.py: render)."""
_SAID = re.compile(r"^\s*([^\W\d_][\w'’-]*(?: (?!said\b)[^\W\d_][\w'’-]*)?)(?: said)?:\s", re.I)


def statements(text: str, today: date | None) -> list[Statement]:
    """Every sentence of `text` that states something (not a question), with the
    dates nearest before it in its paragraph, or, in a message that opens with
    its stamp, the message's date (a reply's later paragraphs were said then
    too), in a reply with no stamp the date of the message before it (the
    prompt stamps no reply to the line just before it); and who it says said it."""
    out: list[Statement] = []
    span: tuple[date, date] | None = None
    message: tuple[date, date] | None = None
    last_said: tuple[date, date] | None = None
    opening = reply = False
    position = 0
    for paragraph in text.split("\n\n"):
        span = message
        for line in paragraph.split("\n"):
            if role := _ROLE.fullmatch(line.strip()):
                span = message = None
                opening = role.group(0) in ("<user>", "<assistant>")  # a chat message, stamped when it was said
                reply = role.group(0) == "<assistant>"
                continue
            marks = list(_DATES.finditer(line))
            if opening:
                opening = False
                if marks and marks[0].start() == 0:
                    message = last_said = _span(marks[0], today)
                elif reply:
                    message = span = last_said
            cuts = [0, *(m.start() for m in marks), len(line)]
            for start, end in zip(cuts, cuts[1:]):
                piece = line[start:end]
                mark = _DATES.match(piece)
                if mark:
                    span = _span(mark, today)
                    piece = piece[mark.end():]
                folded_piece = piece.casefold()
                said = _SAID.match(piece)
                speaker = said.group(1).casefold() if said else ""
                sentences = [part.strip().casefold() for part in _SENTENCE_END.split(piece)]
                for n, sentence in enumerate(sentences):
                    position += 1
                    if n and (again := _SAID.match(sentence)):
                        speaker = again.group(1)
                    if sentence and not sentence.endswith("?"):
                        context = " ".join(sentences[max(0, n - 1): n + 2])
                        out.append(Statement(sentence, folded_piece, position, span, context, speaker))
    return out


def holds(statement: Statement, fact: Fact, said_by: str = "", speakers: frozenset[str] = frozenset()) -> bool:
    """The statement tells the fact: its value in the sentence, the words that say
    what the value is in the sentence or the ones beside it; and when the text
    says who said it, that is who did (`said_by`, casefolded), or the sentence
    names them ("Suzune said: Kai's mother..."). `speakers`: the story's names,
    so "Note: ..." is no one's."""
    if not fact.evidence or not any(names(statement.text, w) for w in fact.evidence[0]):
        return False
    if (said_by and statement.speaker in speakers and statement.speaker != said_by
            and not names(statement.text, said_by)):
        return False  # the user's mother told as the character's
    return all(any(starts(statement.context, w) for w in group) for group in fact.evidence[1:])


def facts_told(line: str, facts: Iterable[Fact]) -> frozenset[str]:
    """The ids of the facts a statement of `line` tells (`holds`). A fact's value
    must be in the line before any sentence of it can tell the fact, so the line
    is parsed only when one is."""
    folded = line.casefold()
    named = [f for f in facts if f.evidence and any(w in folded for w in f.evidence[0])]
    if not named:
        return frozenset()
    said = statements(line, None)
    return frozenset(f.id for f in named if any(holds(s, f) for s in said))


def _value_words(fact: Fact) -> tuple[str, ...]:
    return fact.evidence[0] if fact.evidence else ()


def _past_marked(text: str, word: str) -> bool:
    """`word` stands in `text` with a word beside it that says it is no longer so."""
    for found in _word(word).finditer(text):
        around = text[max(0, found.start() - 30): found.end() + 30]
        if any(marker in around for marker in PAST_MARKERS):
            return True
    return False


@dataclass(frozen=True, slots=True)
class Reading:
    """What the reader made of a prompt for one question."""

    right: bool | None
    """It could answer right (None: abstention, nothing to keep)."""
    said: str
    """What it answers."""


class Reader:
    """An ideal reader of one prompt."""

    def __init__(self, text: str, scenario: Scenario) -> None:
        self.today = today_in(text)
        self.scenario = scenario
        self.all = statements(text, self.today)
        self.said_by = speaker_names(scenario)
        self.speakers = frozenset(self.said_by.values())

    def sightings(self, fact: Fact) -> list[Statement]:
        return [s for s in self.all if holds(s, fact, self.said_by.get(fact.id, ""), self.speakers)]

    def current(self, fact: Fact) -> list[Statement]:
        """Where `fact` is told and not itself outdated in the same sentence."""
        return self.sightings(fact)

    def newest(self, found: list[Statement]) -> Statement | None:
        return max(found, key=lambda s: ((s.span[1] if s.span else date.min), s.position), default=None)

    def knows(self, fact: Fact) -> bool:
        """The fact is in reach as the current value: told, and not outdated by a
        newer telling of what supersedes it; and what it supersedes, when told
        later, does not outdate it."""
        mine = self.sightings(fact)
        newer_facts = [f for f in self.scenario.facts.values() if f.supersedes == fact.id]
        # A sentence telling both the old and the new value counts for the new one when it
        # says the old one is past ("moved from London to Berlin", "not Biscuit anymore").
        for newer in newer_facts:
            theirs = [s for s in self.sightings(newer)
                      if not holds(s, fact) or any(_past_marked(s.text, w) for w in _value_words(fact))]
            if theirs:
                return False if not mine else self._later(theirs, mine)
        if fact.supersedes:
            old = self.scenario.facts[fact.supersedes]
            mine = [s for s in mine if not holds(s, old) or any(_past_marked(s.text, w) for w in _value_words(old))]
            if not mine:
                return False
            olds = [s for s in self.sightings(old) if not holds(s, fact)]
            return not olds or self._later(mine, olds)
        return bool(mine)

    def _later(self, these: list[Statement], those: list[Statement]) -> bool:
        a, b = self.newest(these), self.newest(those)
        assert a is not None and b is not None
        return ((a.span[1] if a.span else date.min), a.position) > ((b.span[1] if b.span else date.min), b.position)

    def event_day(self, fact: Fact, s: Statement) -> tuple[date, date] | None:
        """When the event a statement tells happened, by the dates beside it."""
        if s.span is None:
            return None
        if fact.days_before:
            if not (fact.relative and fact.relative in s.text) or s.span[0] != s.span[1]:
                return s.span  # the telling's day: without its phrase, the reader takes it for the event's
            day = s.span[0] - timedelta(days=fact.days_before)
            return day, day
        return s.span

    def on(self, target: date) -> Fact | None:
        """The one event the prompt dates to `target` (the narrowest dating wins)."""
        found: list[tuple[int, Fact]] = []
        for fact in self.scenario.facts.values():
            if not fact.event:
                continue
            for s in self.sightings(fact):
                span = self.event_day(fact, s)
                if span and span[0] <= target <= span[1]:
                    found.append(((span[1] - span[0]).days, fact))
        if not found:
            return None
        narrowest = min(width for width, _ in found)
        facts = {f.id: f for width, f in found if width == narrowest}
        return next(iter(facts.values())) if len(facts) == 1 else None

    def dated(self, fact: Fact) -> tuple[date, date] | None:
        spans = [span for s in self.sightings(fact) if (span := self.event_day(fact, s))]
        return min(spans, key=lambda sp: (sp[1] - sp[0], sp)) if spans else None

    def read(self, q: Question) -> Reading:
        if q.abstain:
            return Reading(None, DONT_KNOW)
        if q.refuse and not q.answer:  # must not know
            leaked = [s for s in self.all if any(names(s.text, w) for w in q.refuse)]
            return Reading(not leaked, f"I heard this: {leaked[0].text}" if leaked else DONT_KNOW)
        facts = [self.scenario.facts[f] for f in q.needs]
        if q.days_ago is not None:
            if self.today is None:
                return Reading(False, "I can't tell what day it is.")
            chosen = self.on(self.today - timedelta(days=q.days_ago))
            right = chosen is not None and chosen.id in q.needs
            return Reading(right, self._answer(q) if right else DONT_KNOW)
        if q.order is not None:
            first, second = (self.dated(self.scenario.facts[f]) for f in q.order)
            right = first is not None and second is not None and first[1] < second[0]
            return Reading(right, self._answer(q) if right else DONT_KNOW)
        if not all(self.knows(f) for f in facts):
            return Reading(False, DONT_KNOW)
        for group in q.also:  # who said it: beside the fact, in its line
            lines = [s.line for f in facts for s in self.sightings(f)]
            if not any(names(line, w) for line in lines for w in group):
                return Reading(False, DONT_KNOW)
        return Reading(True, self._answer(q))

    @staticmethod
    def _answer(q: Question) -> str:
        words = [q.answer[0], *(group[0] for group in q.also)]
        return "It's " + ", ".join(words) + "."


def kept(q: Question, text: str, scenario: Scenario) -> bool | None:
    return Reader(text, scenario).read(q).right


def names_stale(q: Question, answer: str) -> bool:
    """`answer` gives an outdated value of `q` as current: it names it as a word of its own (not inside
    another word, as a small model's run-together names do) and nothing beside it says it is past."""
    folded = answer.casefold()
    return any(names(folded, w) and not _past_marked(folded, w) for w in q.stale)


def score(q: Question, answer: str, scenario: Scenario) -> bool:
    """Right only when the answer gives the value and names nothing it must not."""
    folded = answer.casefold()
    asked = q.ask.casefold()
    if any(names(folded, w) for w in q.refuse):
        return False
    expected = set(q.answer) | {w for group in q.also for w in group}
    for word in scenario.candidates - expected:
        if not names(folded, word) or (names(asked, word) and word not in q.stale and word not in q.distractors):
            continue
        if word in q.stale and _past_marked(folded, word):
            continue
        if q.order is not None and word in q.distractors:
            continue  # the other event of "which came first": judged by order below
        return False
    if q.abstain:
        return any(phrase in folded for phrase in ABSTAIN)
    if not q.answer:  # must not know: right when nothing leaked
        return True
    if not all(any(names(folded, w) for w in group) for group in q.also):
        return False
    hits = [m.start() for w in q.answer for m in _word(w).finditer(folded)]
    if not hits:
        return False
    if q.order is not None:
        others = [m.start() for w in q.distractors for m in _word(w).finditer(folded)]
        return not others or min(hits) < min(others)
    return True
