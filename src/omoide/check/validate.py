"""Bounds on a scenario file before it is read field by field: how deep it
nests, how many facts, questions and events it holds, the shapes of its lists,
and the ranges of its days, its start and its padding. Each mistake is refused
with where it is (`events[3]: ...`), as the loader does for the rest, so that a
hostile or mistyped file never ends in a traceback or a run that never ends.

`decode` reads the JSON itself (the decoder recurses, so a file nested
thousands deep would otherwise end in RecursionError); `check` is called by the
loader on the decoded object."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from omoide.errors import CommandError

MAX_DEPTH = 16
"""Objects and lists inside one another: a scenario needs five at most."""
MAX_ITEMS = {"facts": 10_000, "questions": 10_000, "events": 200_000, "padding": 100_000, "guests": 50}
MAX_DAY = 36_500
"""Days a story may span (and lie before a telling, or be asked back): a hundred years."""
MAX_PAD = 10_000
"""Padding turns in one `pad` event."""
MAX_TURNS = 200_000
"""Chat turns in the whole story (each a model call)."""
YEARS = (1900, 2200)
"""The years `start` may fall in: the story's days must stay dates."""

HINT = "docs/memory-check.md describes the scenario format (version 1)."


def _fail(where: str, what: str) -> CommandError:
    return CommandError(f"{where}: {what}", HINT)


def decode(raw: bytes, where: str) -> Any:
    """The JSON of a scenario file, refused with a clear message when it is not JSON or nests too deep."""
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CommandError(f"{where} is not valid JSON: {exc}.", "docs/memory-check.md describes the scenario format.") from None
    except RecursionError:
        raise _fail(where, f"the JSON nests too deeply (a scenario nests at most {MAX_DEPTH} levels)") from None


def _depth(data: Any, where: str) -> None:
    """Refuse nesting deeper than MAX_DEPTH, naming the path to where it is (walked without recursion)."""
    stack: list[tuple[Any, str, int]] = [(data, "", 1)]
    while stack:
        value, path, depth = stack.pop()
        if not isinstance(value, (dict, list)):
            continue
        if depth > MAX_DEPTH:
            raise _fail(where, f"{path or 'the top'} nests too deeply (a scenario nests at most {MAX_DEPTH} levels)")
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for key, item in items:
            step = f"{path}.{key}" if isinstance(key, str) else f"{path}[{key}]"
            stack.append((item, step.lstrip("."), depth + 1))


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _list(data: dict[str, Any], key: str, where: str) -> list[Any]:
    value = data.get(key, [])
    if not isinstance(value, list):
        raise _fail(where, f"'{key}' must be a list (it is {type(value).__name__})")
    if len(value) > MAX_ITEMS[key]:
        raise _fail(where, f"'{key}' holds {len(value):,} items; a scenario holds at most {MAX_ITEMS[key]:,}")
    return value


def _start(value: Any, where: str) -> None:
    if value is None:
        return
    if not isinstance(value, str):
        raise _fail(where, "'start' must be text: the first evening as 'YYYY-MM-DDTHH:MM'")
    try:
        moment = datetime.strptime(value, "%Y-%m-%dT%H:%M")
    except ValueError:
        raise _fail(where, f"'start' is '{value[:40]}', not a date and time as 'YYYY-MM-DDTHH:MM' (e.g. 2026-03-02T19:00)") from None
    if not YEARS[0] <= moment.year <= YEARS[1]:
        raise _fail(where, f"'start' is in the year {moment.year}; it must fall between {YEARS[0]} and {YEARS[1]}")


def _days(value: Any, where: str, key: str) -> None:
    if _whole(value) and value > MAX_DAY:
        raise _fail(where, f"'{key}' is {value:,}; a story spans at most {MAX_DAY:,} days")


def _facts(facts: list[Any], where: str) -> None:
    for n, fact in enumerate(facts):
        if isinstance(fact, dict):
            _days(fact.get("days_before"), f"{where}: facts[{n}]", "days_before")


def _questions(questions: list[Any], where: str) -> None:
    for n, question in enumerate(questions):
        if not isinstance(question, dict):
            continue
        at = f"{where}: questions[{n}]"
        needs = question.get("needs", [])
        if not isinstance(needs, list) or not all(isinstance(need, str) for need in needs):
            raise _fail(at, "'needs' must be a list of fact ids")
        _days(question.get("days_ago"), at, "days_ago")


def _events(events: list[Any], where: str) -> None:
    turns = 0
    for n, event in enumerate(events):
        if not isinstance(event, dict):
            continue
        at = f"{where}: events[{n}]"
        for key in ("day", "pad"):
            if key in event and not _whole(event[key]):
                raise _fail(at, f"'{key}' must be a whole number")
        _days(event.get("day"), at, "day")
        pad = event["pad"] if _whole(event.get("pad")) else 1
        if pad > MAX_PAD:
            raise _fail(at, f"'pad' is {pad:,} turns; one 'pad' event holds at most {MAX_PAD:,}")
        turns += max(pad, 1)
        if turns > MAX_TURNS:
            raise _fail(at, f"the story reaches {turns:,} turns here; a scenario plays at most {MAX_TURNS:,}")


def check(data: Any, where: str) -> None:
    """Refuse a decoded scenario whose size, shape or ranges are out of bounds."""
    _depth(data, where)
    if not isinstance(data, dict):
        return  # the loader says what a scenario is
    for key in ("padding", "guests"):
        _list(data, key, where)
    _facts(_list(data, "facts", where), where)
    _questions(_list(data, "questions", where), where)
    _events(_list(data, "events", where), where)
    _start(data.get("start"), where)
