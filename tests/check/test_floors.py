"""A model's run shows its floors (a server that always declines, one that
always names the story's most frequent name) and answered over the knowable
questions; kept is split by who told what a question needs."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from omoide.check.floors import most_frequent_name
from omoide.check.scenario import parse
from omoide.cli.app import app
from tests.fakeservers import address, chat_reply, http_server

runner = CliRunner()

STORY: dict[str, Any] = {
    "format": 1, "name": "harbour", "user": "Kai", "host": "suzune", "start": "2026-05-04T18:00",
    "facts": [{"id": "boat", "evidence": [["kestrel"], ["boat"]]},
              {"id": "town", "evidence": [["maizuru"], ["grew"]]}],
    "questions": [
        {"id": "boat", "category": "single", "ask": "What is my sailing thing called?", "answer": "kestrel",
         "needs": ["boat"]},
        {"id": "town", "category": "self", "ask": "Which town are you from?", "answer": "maizuru", "needs": ["town"]},
        {"id": "dog", "category": "abstention", "ask": "What is my dog called?", "abstain": True},
        {"id": "secret", "category": "boundary", "ask": "Where did I apply?", "refuse": ["reykjavik"]},
    ],
    "events": [
        {"day": 1}, {"user": "My boat is called Kestrel. Ask Ferro about Ferro's nets.", "fact": "boat"},
        {"user": "Where did you grow up?", "reply": "I grew up in Maizuru, where Ferro sells fish.", "fact": "town"},
        {"day": 2}, {"ask": "boat"}, {"ask": "town"}, {"ask": "dog"}, {"ask": "secret"},
    ],
}


def test_the_most_frequent_name_leaves_out_the_speakers_and_sentence_openings() -> None:
    assert most_frequent_name(parse(STORY)) == "Ferro"  # "My", "Where", "Kai", "Suzune" are not names here


def test_an_always_declining_model_answers_no_knowable_question_and_its_floors_show(
        omoide_home: Path, tmp_path: Path) -> None:
    path = tmp_path / "harbour.json"
    path.write_text(json.dumps(STORY))
    with http_server({"POST /v1/chat/completions": chat_reply("I don't know; you never told me that.")}) as server:
        os.environ["OMOIDE_BASE_URL"] = address(server) + "/v1"
        os.environ["OMOIDE_MODEL"] = "decliner"
        try:
            out = runner.invoke(app, ["memory", "check", "--scenario", str(path), "--arms", "full", "--json"],
                                catch_exceptions=False)
            shown = runner.invoke(app, ["memory", "check", "--scenario", str(path), "--arms", "full"],
                                  catch_exceptions=False)
        finally:
            os.environ.pop("OMOIDE_BASE_URL")
            os.environ.pop("OMOIDE_MODEL")
    assert out.exit_code == 0, out.output
    arms = {a["arm"]: a for a in json.loads(out.stdout)["arms"]}
    assert set(arms) == {"full", "declines", "frequent"}
    assert arms["declines"]["floor"] and arms["frequent"]["floor"] and not arms["full"]["floor"]
    for name in ("full", "declines"):
        figures = arms[name]["figures"]
        assert figures["accuracy_knowable"] == 0.0  # knows nothing: answers nothing a memory is needed for
        assert figures["accuracy"]["all"] == 0.5  # yet half right: the abstention and the must-not-know
    frequent = {a["question"]: a for a in arms["frequent"]["answers"]}
    assert frequent["boat"]["answer"] == "It's Ferro." and not frequent["boat"]["correct"]
    # Kept, by who told it: the full context holds both.
    assert arms["full"]["figures"]["kept_by_source"] == {"user": 1.0, "character": 1.0}
    assert shown.exit_code == 0, shown.output
    rows = {line.split("│")[1].strip(): line for line in shown.output.splitlines() if line.startswith("│")}
    assert "knowable" in rows and "said by user" in rows and "said by character" in rows
    header = " ".join(shown.output.split())
    assert "declines" in header and "frequent" in header
    assert [c.strip() for c in rows["knowable"].split("│")[1:-1]] == ["knowable", "2", "0", "0", "0"]
