"""A scenario made only of stored lines (as a converted LoCoMo conversation is)
runs with memory work at the configured cadence, no dummy model turns: the
summary is written part by part as the lines are stored, each part the size a
chat that replies folds in."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from omoide.check.arms import arm
from omoide.check.oracle import OracleBackend
from omoide.check.runner import ArmRun, isolated_home
from omoide.check.scenario import parse
from omoide.config.settings import Settings

PAIRS = 60


def stored_story() -> dict[str, object]:
    events: list[dict[str, object]] = [{"day": 1}]
    events += [{"user": f"Evening {n}: the harbour lights were on.", "reply": f"Mm, lights number {n}."} for n in range(PAIRS)]
    events.append({"user": "My grandmother keeps the lighthouse at Porthkennack.", "reply": "Does she?", "fact": "lighthouse"})
    events += [{"user": f"Later {n}: the gulls again.", "reply": f"Gull {n}."} for n in range(10)]
    # No question: its reply would start the catch-up itself; here the stored lines alone must.
    return {"format": 1, "name": "stored", "user": "Kai", "host": "suzune", "start": "2026-05-04T18:00",
            "facts": [{"id": "lighthouse", "evidence": [["porthkennack"], ["lighthouse", "grandmother"]]}],
            "questions": [{"id": "lighthouse", "category": "single", "ask": "Where does my gran work?",
                           "answer": "porthkennack", "needs": ["lighthouse"]}],
            "events": events}


async def test_a_story_of_stored_lines_is_compressed_at_the_cadence_a_reply_would_make(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    seen: list[int] = []
    real = isolated_home

    def watched():  # type: ignore[no-untyped-def]
        context = real()

        class Watch:
            def __enter__(self) -> Path:
                self.home = context.__enter__()
                return self.home

            def __exit__(self, *exc: object) -> None:
                with sqlite3.connect(self.home / "omoide.db") as db:
                    seen.extend(row[0] for row in db.execute("SELECT count(*) FROM summaries"))
                context.__exit__(*exc)  # type: ignore[arg-type]
        return Watch()

    monkeypatch.setattr("omoide.check.runner.isolated_home", watched)
    settings = Settings().updated(memory_writer="extract")
    scenario = parse(stored_story())
    result = await ArmRun(arm("summary"), scenario, settings, OracleBackend("writer")).run()  # type: ignore[arg-type]
    assert not result.error
    memory = settings.memory
    part = memory.summary_threshold + 1 - memory.recent_messages
    lines = 2 * (PAIRS + 11)
    assert seen and seen[0] >= (lines - memory.summary_threshold) // part, seen  # no dummy turns, yet a part a cadence
