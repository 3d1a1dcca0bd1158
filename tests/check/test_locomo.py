"""A LoCoMo-shaped conversation, written here (never the benchmark's own data),
converted into a scenario: who is who, sessions as days with their gaps,
stored lines, image captions, and which questions are kept, built from which
turns, and why the others are dropped."""

from __future__ import annotations

import asyncio
from datetime import date
from pathlib import Path
from typing import Any

from omoide.check.arms import arm
from omoide.check.locomo import answer_day, convert
from omoide.check.oracle import OracleBackend
from omoide.check.run import run_check
from omoide.check.scenario import parse
from omoide.config.settings import Settings

CONVERSATION: dict[str, Any] = {
    "speaker_a": "Ana",
    "speaker_b": "Bruno",
    "session_1_date_time": "7:00 pm on 3 March, 2024",
    "session_1": [
        {"speaker": "Bruno", "dia_id": "D1:1", "text": "Ana! Long time. How was your week?"},
        {"speaker": "Ana", "dia_id": "D1:2", "text": "I ran the Riverside marathon yesterday, my legs are gone."},
        {"speaker": "Bruno", "dia_id": "D1:3", "text": "Impressive. I play the clarinet in a jazz quartet now.",
         "blip_caption": "a photo of a clarinet on a music stand", "img_url": ["https://example.invalid/x.jpg"]},
        {"speaker": "Ana", "dia_id": "D1:4", "text": "My sister Carla moved to Lisbon for her new job."},
        {"speaker": "Ana", "dia_id": "D1:5", "text": "Last Friday I adopted a greyhound called Pepper."},
        {"speaker": "Bruno", "dia_id": "D1:6", "text": "Bruno's advice: walk Pepper twice a day."},
        {"speaker": "Ana", "dia_id": "D1:7", "text": "I will. Talk soon!"},
    ],
    "session_2_date_time": "10:00 am on 20 May, 2024",
    "session_2": [
        {"speaker": "Ana", "dia_id": "D2:1", "text": "Guess what, Carla is getting married in the autumn."},
        {"speaker": "Bruno", "dia_id": "D2:2", "text": "Wonderful news. I bought a bicycle last week, a blue one."},
    ],
    "session_3_date_time": "",  # LoCoMo files list dates of sessions that have no turns
    "qa": [
        {"question": "What instrument does Bruno play?", "answer": "clarinet", "evidence": ["D1:3"], "category": 4},
        {"question": "What colour is Bruno's bicycle?", "answer": "red", "evidence": ["D2:2"], "category": 4},
        {"question": "Who is getting married, and in which city does she live?", "answer": "Carla, in Lisbon",
         "evidence": ["D1:4", "D2:1"], "category": 1},
        {"question": "Where did Ana's sister move?", "answer": "Lisbon", "evidence": ["D1:4"], "category": 1},
        {"question": "When did Ana run the marathon?", "answer": "2 March 2024", "evidence": ["D1:2"], "category": 2},
        {"question": "When did Ana adopt a dog?", "answer": "The Friday before 3 March 2024", "evidence": ["D1:5"],
         "category": 2},
        {"question": "When did Bruno buy a bicycle?", "answer": "The week before 20 May 2024", "evidence": ["D2:2"],
         "category": 2},
        {"question": "Would Ana enjoy a trip to Portugal?", "answer": "Likely yes", "evidence": ["D1:4"], "category": 3},
        {"question": "What breed of dog did Bruno adopt?", "evidence": ["D1:5"], "category": 5,
         "adversarial_answer": "greyhound"},
    ],
}


def test_the_speakers_sessions_and_turns_become_a_story_of_stored_lines() -> None:
    conversion = convert(CONVERSATION, name="tiny", host="suzune", host_name="Suzune")
    story = conversion.scenario
    assert story["user"] == "Ana" and story["host"] == "suzune" and story["start"] == "2024-03-03T08:00"
    days = [e["day"] for e in story["events"] if "day" in e]
    assert days == [1, 79, 80]  # 3 March, 20 May, and the questions the day after
    lines = [e for e in story["events"] if "user" in e]
    assert all(e["reply"] for e in lines)  # every line stored as said: no model turn
    assert lines[0] == {"user": "…", "reply": "Ana! Long time. How was your week?"}  # she opens: a cue that says nothing
    assert lines[1]["reply"].endswith("quartet now. [shares a photo of a clarinet on a music stand]")
    assert lines[2]["user"] == ("My sister Carla moved to Lisbon for her new job.\n"
                                "Last Friday I adopted a greyhound called Pepper.")  # one speaker's turns joined
    assert lines[2]["reply"] == "Suzune's advice: walk Pepper twice a day."  # her name is the host's
    assert lines[3] == {"user": "I will. Talk soon!", "reply": "…"}  # nobody answered it
    text = " ".join(e.get("user", "") + e.get("reply", "") for e in story["events"])
    assert "Bruno" not in text
    parse(story, "tiny")  # a valid scenario of format 1


def test_questions_are_kept_by_category_with_facts_from_their_evidence_turns() -> None:
    conversion = convert(CONVERSATION, name="tiny", host="suzune", host_name="Suzune")
    story = conversion.scenario
    questions = {q["id"]: q for q in story["questions"]}
    facts = {f["id"]: f for f in story["facts"]}

    single = questions["q1"]
    assert single["category"] == "single" and single["ask"] == "What instrument does Suzune play?"
    assert single["answer"] == ["clarinet"]
    assert facts["q1"]["said_by"] == "character"
    assert facts["q1"]["evidence"][0] == ["clarinet"]
    assert len(facts["q1"]["evidence"]) == 2 and "clarinet" not in facts["q1"]["evidence"][1]  # the sentence's own words

    multihop = questions["q3"]
    assert multihop["category"] == "multihop" and multihop["needs"] == ["q3.1", "q3.2"]
    assert {multihop["answer"][0], *(g[0] for g in multihop["also"])} == {"carla", "lisbon"}
    assert facts["q3.1"]["said_by"] == facts["q3.2"]["said_by"] == "user"

    marathon = questions["q5"]
    assert marathon["category"] == "temporal" and marathon["days_ago"] == (date(2024, 5, 21) - date(2024, 3, 2)).days
    assert marathon["ask"] == "What did Ana do on Saturday, 2 March 2024?"
    assert facts["q5"]["event"] and facts["q5"]["relative"] == "yesterday" and facts["q5"]["days_before"] == 1
    assert "marathon" in marathon["answer"]
    dog = facts["q6"]
    assert dog["relative"] == "last friday" and dog["days_before"] == 2  # 3 March 2024 was a Sunday

    assert questions["q9"]["category"] == "abstention" and questions["q9"]["abstain"]
    assert set(questions) == {"q1", "q3", "q5", "q6", "q9"}
    assert conversion.kept == {"single-hop": 1, "multi-hop": 1, "temporal": 2, "adversarial": 1}
    assert conversion.dropped == {
        "single-hop": {"the answer's words are not all in one evidence turn": 1},
        "multi-hop": {"fewer than two evidence turns tell a part of it": 1},
        "temporal": {"the answer is not one day (a month, a year, a week, a span)": 1},
        "open-domain": {"open-domain: an inference, not something said": 1},
    }
    asked = [e["ask"] for e in story["events"] if "ask" in e]
    assert asked == list(questions)
    planted = {e["fact"] for e in story["events"] if "fact" in e}
    assert planted == {"q5", "q3.1", "q3.2"}  # a line plants one fact (its horizon): q1 shares q5's line


def test_a_question_list_with_broken_entries_keeps_the_good_ones_and_counts_the_rest() -> None:
    broken = {**CONVERSATION, "qa": [None, "What?", {"question": None, "category": 4}, {"question": "Why?", "category": "x"},
                                     {"question": "Why not?", "category": [4]}, *CONVERSATION["qa"]]}
    conversion = convert(broken, name="tiny", host="suzune", host_name="Suzune")
    whole = convert(CONVERSATION, name="tiny", host="suzune", host_name="Suzune")
    assert [q["ask"] for q in conversion.scenario["questions"]] == [q["ask"] for q in whole.scenario["questions"]]
    assert conversion.kept == whole.kept
    assert conversion.dropped["unknown"] == {"no category or no question": 4}
    assert conversion.dropped["single-hop"]["no category or no question"] == 1  # a category, but no question
    assert convert({**CONVERSATION, "qa": "not a list"}).scenario["questions"] == []


def test_an_item_of_locomo10_json_converts_with_the_questions_kept_beside_its_conversation() -> None:
    sessions = {key: value for key, value in CONVERSATION.items() if key != "qa"}
    item = {"sample_id": "conv-x", "qa": CONVERSATION["qa"], "conversation": sessions, "event_summary": {}}
    whole = convert(CONVERSATION, name="tiny", host="suzune", host_name="Suzune")
    nested = convert(item, name="tiny", host="suzune", host_name="Suzune")
    assert nested.scenario == whole.scenario and nested.kept == whole.kept and len(whole.scenario["questions"]) == 5


def test_one_day_is_read_from_an_answer_and_a_span_is_not() -> None:
    assert answer_day("7 May 2023") == date(2023, 5, 7)
    assert answer_day("19 January, 2023") == date(2023, 1, 19)
    assert answer_day("The sunday before 25 May 2023") == date(2023, 5, 21)
    for span in ("June 2023", "2022", "The week before 9 June 2023", "The weekend before 17 July 2023", "Since 2016"):
        assert answer_day(span) is None, span


def test_the_converted_story_runs_and_everything_said_is_in_full_context(omoide_home: Path) -> None:
    story = parse(convert(CONVERSATION, name="tiny").scenario, "tiny")
    report = asyncio.run(run_check(Settings(discover_servers=[]), [OracleBackend("reader")], arms=[arm("full")],
                                   scenarios=[story]))
    full = report.arms[0]
    assert not full.error
    kept = {a.question: a.kept for a in full.answers}
    assert kept == {"q1": True, "q3": True, "q5": True, "q6": True, "q9": None}
    assert full.horizon() == "–"  # no prompt but the questions': no horizon to tell ("≥0" said it held nothing)
