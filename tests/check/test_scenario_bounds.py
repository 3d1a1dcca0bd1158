"""Hostile scenario files handed to `omoide memory check --scenario`: each is
refused in a sentence that says where the mistake is, never a traceback
(RecursionError, TypeError, ValueError, OverflowError) and never a run that
does not end (`pad: 1000000000`). The shipped scenarios, format 1, still load
with the same meaning."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from omoide.check.scenario import load, shipped

GOOD: dict[str, Any] = {
    "format": 1, "padding": ["Nice weather."],
    "facts": [{"id": "cat", "evidence": [["biscuit"]]}],
    "questions": [{"id": "q", "category": "single", "ask": "What is my pet called?", "answer": "biscuit", "needs": ["cat"]}],
    "events": [{"day": 1}, {"user": "My cat is Biscuit.", "fact": "cat"}, {"pad": 2}, {"ask": "q"}],
}


def with_(**changes: Any) -> dict[str, Any]:
    return {**json.loads(json.dumps(GOOD)), **changes}


def check(path: Path, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "OMOIDE_HOME": str(home), "OMOIDE_DISCOVER_SERVERS": "[]"}
    return subprocess.run([sys.executable, "-m", "omoide.cli.app", "memory", "check", "--oracle", "--oracles", "reader",
                           "--arms", "window", "--scenario", str(path)],
                          capture_output=True, text=True, env=env, timeout=120)


def nested(depth: int) -> str:
    return '{"format": 1, "facts": ' + "[" * depth + "]" * depth + "}"


CASES: list[tuple[str, str | dict[str, Any], str]] = [
    ("deep", nested(5000), "nests too deeply"),
    ("deep-but-parsable", nested(200), "facts[0][0][0]"),
    ("facts-number", with_(facts=5), "'facts' must be a list (it is int)"),
    ("needs-number", with_(questions=[{**GOOD["questions"][0], "needs": 5}]), "questions[0]: 'needs' must be a list of fact ids"),
    ("start-bad", with_(start="tomorrow evening"), "'start' is 'tomorrow evening', not a date and time as 'YYYY-MM-DDTHH:MM'"),
    ("start-extreme", with_(start="9999-12-31T23:59"), "'start' is in the year 9999; it must fall between 1900 and 2200"),
    ("start-number", with_(start=20260302), "'start' must be text"),
    ("day-huge", with_(events=[{"day": 10**12}]), "events[0]: 'day' is 1,000,000,000,000; a story spans at most 36,500 days"),
    ("days-ago-huge", with_(questions=[{**GOOD["questions"][0], "days_ago": 10**15}]),
     "questions[0]: 'days_ago' is 1,000,000,000,000,000"),
    ("days-before-huge", with_(facts=[{**GOOD["facts"][0], "days_before": 10**9}]), "facts[0]: 'days_before' is 1,000,000,000"),
    ("pad-huge", with_(events=[{"day": 1}, {"pad": 1_000_000_000}]), "events[1]: 'pad' is 1,000,000,000 turns; one 'pad' event holds at most 10,000"),
    ("pad-float", with_(events=[{"pad": 2.5}]), "events[0]: 'pad' must be a whole number"),
    ("too-many-events", with_(events=[{"pad": 10_000}] * 25), "the story reaches 210,000 turns here"),
]


@pytest.mark.parametrize(("name", "content", "message"), CASES, ids=[c[0] for c in CASES])
def test_a_hostile_scenario_file_is_refused_with_where_the_mistake_is(name: str, content: str | dict[str, Any], message: str,
                                                                    tmp_path: Path) -> None:
    path = tmp_path / f"{name}.json"
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    result = check(path, tmp_path / "home")
    said = " ".join((result.stdout + result.stderr).split())
    assert result.returncode == 1, said
    assert "Traceback" not in said, said
    assert str(path) in said and message in said, said
    assert "docs/memory-check.md" in said


def test_a_good_scenario_and_the_shipped_ones_still_load_with_the_same_meaning(tmp_path: Path) -> None:
    path = tmp_path / "good.json"
    path.write_text(json.dumps(GOOD))
    story = load(path)
    assert story.turns() == 4 and story.start == "2026-03-02T19:00" and story.questions["q"].needs == ("cat",)
    stories = shipped()
    assert len(stories) >= 6 and all(s.turns() > 0 for s in stories)
