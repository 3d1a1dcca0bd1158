"""Memory-check scenarios as files: the story, what it plants, and the questions
asked back (docs/memory-check.md has the format, with an example).

A scenario is a JSON object, version 1:

- `facts`: what the story plants, each with the words that show it reached a
  prompt (`evidence`: groups of alternatives, every group in one sentence), the
  fact it corrects (`supersedes`), and, for an event told with a relative
  phrase ("last weekend"), that phrase and how many days it lies before the
  telling (`relative`, `days_before`);
- `events`: the story in order: a new day, your lines (answered by the model,
  or with the character's line given), padding, scene stage notes, branches,
  swipes, edits, diary lines, pins, new chats, and the questions (`ask`);
- `questions`: each with its category, the question (which should not repeat
  the fact's words), the right answer, the stale and distractor values that must
  not be given, the facts it needs, and for must-not-know questions the words
  that would show a leak.

Pure data and validation: nothing here runs a chat."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from omoide.check import validate
from omoide.errors import CommandError

FORMAT = 1
MAX_FILE_BYTES = 32 * 1024 * 1024

CATEGORIES: tuple[str, ...] = (
    "single", "indirect", "self", "preference", "update", "multihop", "temporal", "abstention",
    "boundary", "point_in_time", "pinned", "hygiene", "new_chat",
)
"""Every category the check reports, in the order of its table. A scenario may
use any subset; an unknown category is an error (a typo would vanish)."""

EVENT_KINDS = ("day", "user", "pad", "invite", "leave", "branch_save", "branch_restore", "swipe", "edit",
               "remember", "pin", "chat", "end", "ask")


@dataclass(frozen=True, slots=True)
class Fact:
    id: str
    evidence: tuple[tuple[str, ...], ...]
    """Groups of words (casefolded); a sentence holds the fact when it holds a word of every group."""
    supersedes: str = ""
    """The fact this one corrects: from its telling on, that one's value is stale."""
    relative: str = ""
    """A relative phrase the telling uses for when it happened ("last weekend")."""
    days_before: int = 0
    """How many days before its telling the event happened (with `relative`)."""
    event: bool = False
    """Something done on a day: a time question may ask which day."""
    said_by: str = ""
    """Who told it: 'user', 'character' (the host) or a character id; '' as its
    planting line says (check/sources.py)."""


@dataclass(frozen=True, slots=True)
class Question:
    id: str
    category: str
    ask: str
    speaker: str = ""
    """Who is asked (a character id; default: the scenario's host)."""
    truth: str = ""
    """The right answer in words (for the judge and the report)."""
    answer: tuple[str, ...] = ()
    """The value: an answer is right when it holds one of these."""
    also: tuple[tuple[str, ...], ...] = ()
    """Further groups the answer must hold a word of (who told whom ...)."""
    stale: tuple[str, ...] = ()
    """Values that were true once: naming one as current is wrong."""
    distractors: tuple[str, ...] = ()
    """Values of the story that answer something else: naming one is wrong."""
    refuse: tuple[str, ...] = ()
    """Words that show the character knows what it must not."""
    abstain: bool = False
    """Nothing was ever said: right when the answer declines and names no value."""
    needs: tuple[str, ...] = ()
    """The facts a reader needs in reach to answer."""
    days_ago: int | None = None
    """'What did we do N days ago?': the event fact whose day it was."""
    order: tuple[str, str] | None = None
    """'Which came first?': the facts of the two events, the earlier first."""


@dataclass(frozen=True, slots=True)
class Event:
    kind: str
    value: Any
    reply: str = ""
    """With `user`: the character's line, stored as said (no model call)."""
    speaker: str = ""
    """Who answers (a scene), or who says `reply`."""
    fact: str = ""
    """The fact this line plants."""
    importance: int | None = None


@dataclass(frozen=True, slots=True)
class Scenario:
    name: str
    family: str
    seed: int
    user: str
    host: str
    guests: tuple[str, ...]
    start: str
    """The first day's evening, ISO 'YYYY-MM-DDTHH:MM', local time."""
    facts: dict[str, Fact]
    questions: dict[str, Question]
    events: tuple[Event, ...]
    padding: tuple[str, ...]
    about: str = ""
    source: str = ""
    """Where it was read from."""
    candidates: frozenset[str] = field(default_factory=frozenset)
    """Every value a question of the story answers with, or must not: an answer
    that names one a question did not ask for (and did not itself name) is wrong."""

    def turns(self) -> int:
        """Chat turns the story takes (for the progress bar)."""
        return sum(e.value if e.kind == "pad" else 1 for e in self.events if e.kind in ("user", "pad", "ask", "swipe", "edit"))

    def messages(self) -> int:
        return 2 * self.turns()


def _fail(where: str, what: str) -> CommandError:
    return CommandError(f"{where}: {what}", "docs/memory-check.md describes the scenario format (version 1).")


def _words(value: Any, where: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise _fail(where, "expected a word or a list of words")
    return tuple(v.strip().casefold() for v in value)


def _groups(value: Any, where: str) -> tuple[tuple[str, ...], ...]:
    if not isinstance(value, list):
        raise _fail(where, "expected a list of word groups")
    return tuple(_words(group, where) for group in value)


def _str(data: dict[str, Any], key: str, where: str, default: str | None = None) -> str:
    value = data.get(key, default)
    if not isinstance(value, str):
        raise _fail(where, f"'{key}' must be text")
    return value


_FACT_KEYS = {"id", "evidence", "supersedes", "relative", "days_before", "event", "said_by", "note"}
_QUESTION_KEYS = {"id", "category", "ask", "speaker", "truth", "answer", "also", "stale", "distractors", "refuse",
                  "abstain", "needs", "days_ago", "order", "note"}


def _fact(data: Any, n: int) -> Fact:
    where = f"facts[{n}]"
    if not isinstance(data, dict):
        raise _fail(where, "expected an object")
    if unknown := set(data) - _FACT_KEYS:
        raise _fail(where, f"unknown field(s): {', '.join(sorted(unknown))}")
    days = data.get("days_before", 0)
    if not isinstance(days, int) or days < 0:
        raise _fail(where, "'days_before' must be a whole number of days, 0 or more")
    return Fact(_str(data, "id", where), _groups(data.get("evidence"), f"{where}.evidence"),
                _str(data, "supersedes", where, ""), _str(data, "relative", where, "").casefold(), days,
                bool(data.get("event", False)), _str(data, "said_by", where, "").casefold())


def _question(data: Any, n: int) -> Question:
    where = f"questions[{n}]"
    if not isinstance(data, dict):
        raise _fail(where, "expected an object")
    if unknown := set(data) - _QUESTION_KEYS:
        raise _fail(where, f"unknown field(s): {', '.join(sorted(unknown))}")
    category = _str(data, "category", where)
    if category not in CATEGORIES:
        raise _fail(where, f"unknown category '{category}' (categories: {', '.join(CATEGORIES)})")
    order = data.get("order")
    if order is not None and not (isinstance(order, list) and len(order) == 2 and all(isinstance(o, str) for o in order)):
        raise _fail(where, "'order' must name two facts, the earlier first")
    days_ago = data.get("days_ago")
    if days_ago is not None and (not isinstance(days_ago, int) or days_ago < 0):
        raise _fail(where, "'days_ago' must be a whole number of days")
    question = Question(
        id=_str(data, "id", where), category=category, ask=_str(data, "ask", where),
        speaker=_str(data, "speaker", where, ""), truth=_str(data, "truth", where, ""),
        answer=_words(data["answer"], f"{where}.answer") if "answer" in data else (),
        also=_groups(data.get("also", []), f"{where}.also"),
        stale=_words(data["stale"], f"{where}.stale") if data.get("stale") else (),
        distractors=_words(data["distractors"], f"{where}.distractors") if data.get("distractors") else (),
        refuse=_words(data["refuse"], f"{where}.refuse") if data.get("refuse") else (),
        abstain=bool(data.get("abstain", False)),
        needs=tuple(data.get("needs", [])), days_ago=days_ago,
        order=(order[0], order[1]) if order else None,
    )
    if not question.ask.strip():
        raise _fail(where, "the question is empty")
    if not (question.answer or question.abstain or question.refuse):
        raise _fail(where, "a question needs an 'answer', 'abstain': true, or the words it must 'refuse'")
    return question


def _event(data: Any, n: int) -> Event:
    where = f"events[{n}]"
    if not isinstance(data, dict):
        raise _fail(where, "expected an object")
    kinds = [k for k in EVENT_KINDS if k in data]
    if len(kinds) != 1:
        raise _fail(where, f"an event has exactly one of: {', '.join(EVENT_KINDS)}")
    kind = kinds[0]
    value = data[kind]
    if kind in ("day", "pad") and (not isinstance(value, int) or value < (1 if kind == "day" else 0)):
        raise _fail(where, f"'{kind}' must be a whole number")
    if kind == "end":
        value = True
    elif kind not in ("day", "pad") and not isinstance(value, str):
        raise _fail(where, f"'{kind}' must be text")
    importance = data.get("importance")
    if importance is not None and not (isinstance(importance, int) and 1 <= importance <= 5):
        raise _fail(where, "'importance' is 1 to 5")
    return Event(kind, value, _str(data, "reply", where, ""), _str(data, "speaker", where, ""),
                 _str(data, "fact", where, ""), importance)


def parse(data: Any, source: str = "") -> Scenario:
    """A scenario from its JSON object, checked: every name it uses exists, every
    question is asked once."""
    where = source or "scenario"
    if not isinstance(data, dict):
        raise _fail(where, "a scenario is a JSON object")
    validate.check(data, where)
    if data.get("format") != FORMAT:
        raise _fail(where, f"'format' must be {FORMAT} (this omoide reads version {FORMAT})")
    try:
        facts = {f.id: f for f in (_fact(d, n) for n, d in enumerate(data.get("facts", [])))}
        questions = {q.id: q for q in (_question(d, n) for n, d in enumerate(data.get("questions", [])))}
        events = tuple(_event(d, n) for n, d in enumerate(data.get("events", [])))
    except CommandError as exc:
        raise CommandError(f"{where}: {exc.message}", exc.hint) from None
    padding = _words_keep_case(data.get("padding", []), f"{where}: padding")
    if any(e.kind == "pad" and e.value for e in events) and not padding:
        raise _fail(where, "'pad' events need a 'padding' list of lines")
    for fact in facts.values():
        if fact.supersedes and fact.supersedes not in facts:
            raise _fail(where, f"fact '{fact.id}' supersedes '{fact.supersedes}', which is not a fact")
    for question in questions.values():
        for named in (*question.needs, *(question.order or ())):
            if named not in facts:
                raise _fail(where, f"question '{question.id}' needs fact '{named}', which is not a fact")
    asked = [e.value for e in events if e.kind == "ask"]
    for qid in asked:
        if qid not in questions:
            raise _fail(where, f"an event asks '{qid}', which is not a question")
    if len(set(asked)) != len(asked):
        raise _fail(where, "a question is asked twice")
    for e in events:
        if e.fact and e.fact not in facts:
            raise _fail(where, f"an event plants '{e.fact}', which is not a fact")
    host = _str(data, "host", where, "suzune")
    candidates = frozenset(w for q in questions.values() for w in (*q.answer, *q.stale, *q.distractors, *q.refuse))
    return Scenario(
        name=_str(data, "name", where, Path(source).stem if source else "scenario"),
        family=_str(data, "family", where, _str(data, "name", where, "scenario")),
        seed=int(data.get("seed", 0)) if isinstance(data.get("seed", 0), int) else 0,
        user=_str(data, "user", where, "Kai"), host=host,
        guests=tuple(_words_keep_case(data.get("guests", []), f"{where}: guests")),
        start=_str(data, "start", where, "2026-03-02T19:00"),
        facts=facts, questions=questions, events=events, padding=tuple(padding),
        about=_str(data, "about", where, ""), source=source, candidates=candidates,
    )


def _words_keep_case(value: Any, where: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _fail(where, "expected a list of text")
    return list(value)


def load(path: Path) -> Scenario:
    """A scenario file; a clear error for a file that is not one."""
    try:
        if not path.is_file():
            raise CommandError(f"{path} is not a scenario file.", "Give the path of a .json scenario (docs/memory-check.md).")
        with path.open("rb") as f:
            raw = f.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise CommandError(f"{path} could not be read: {exc.strerror}.", "Check the path and its permissions.") from None
    if len(raw) > MAX_FILE_BYTES:
        raise CommandError(f"{path} is larger than {MAX_FILE_BYTES // 2**20} MiB.", "A scenario is a story, not a library.")
    return parse(validate.decode(raw, str(path)), str(path))


def shipped() -> list[Scenario]:
    """The scenarios that come with omoide (made by benchmarks/make_scenarios.py)."""
    folder = resources.files("omoide.check") / "scenarios"
    out = []
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".json"):
            out.append(parse(json.loads(entry.read_text(encoding="utf-8")), f"shipped/{entry.name}"))
    return out
