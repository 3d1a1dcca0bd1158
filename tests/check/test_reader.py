"""The ideal reader and the scoring, on prompts written by hand and on a small
scenario; the oracles' memory work through omoide's own validators; the judge;
the scenario format's errors."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from omoide.check.judge import JUDGE_PROMPT, judge_request, verdict
from omoide.check.oracle import Oracle
from omoide.check.reader import DONT_KNOW, Reader, names_stale, score, statements, today_in
from omoide.check.results import Answer
from omoide.check.scenario import Scenario, load, parse
from omoide.errors import CommandError
from omoide.memory.memos import parse_highlights
from omoide.memory.summary import validate_summary
from tests.scripted import ScriptedBackend

TAIL = "Current date and time: Saturday 07 March 2026, 19:05."


def story(**more: Any) -> Scenario:
    data: dict[str, Any] = {
        "format": 1, "name": "hand", "user": "Kai", "host": "suzune",
        "facts": [
            {"id": "cat", "evidence": [["biscuit"], ["cat"]]},
            {"id": "bike", "evidence": [["comet"], ["bicycle"]]},
            {"id": "home_old", "evidence": [["london"], ["live", "flat"]]},
            {"id": "home_new", "evidence": [["berlin"], ["moved", "live"]], "supersedes": "home_old"},
            {"id": "kites", "evidence": [["kites"]], "event": True},
            {"id": "porch", "evidence": [["porch"]], "event": True},
            {"id": "race", "evidence": [["marathon"]], "event": True, "relative": "three days ago", "days_before": 3},
        ],
        "questions": [
            {"id": "cat", "category": "single", "ask": "What's my pet called?", "answer": "biscuit", "needs": ["cat"],
             "distractors": ["pepper"]},
            {"id": "bike", "category": "single", "ask": "What did I call my bike?", "answer": "comet", "needs": ["bike"]},
            {"id": "home", "category": "update", "ask": "Which city am I living in now?", "answer": "berlin",
             "needs": ["home_new"], "stale": ["london"]},
            {"id": "when", "category": "temporal", "ask": "What did we do three days ago?", "answer": "kites",
             "needs": ["kites"], "days_ago": 3, "distractors": ["porch"]},
            {"id": "first", "category": "temporal", "ask": "Which came first, my marathon or the kites?",
             "answer": "marathon", "order": ["race", "kites"], "distractors": ["kites"]},
            {"id": "dog", "category": "abstention", "ask": "What's my dog called?", "abstain": True},
            {"id": "secret", "category": "boundary", "ask": "Wren, where did I apply?", "refuse": ["reykjavik"]},
            {"id": "told", "category": "boundary", "ask": "Wren, where did I apply, and who told you?",
             "answer": "reykjavik", "also": [["suzune"]], "needs": ["secret"]},
        ],
        "events": [{"ask": "cat"}],
    }
    data["facts"].append({"id": "secret", "evidence": [["reykjavik"]]})
    data.update(more)
    return parse(data, "hand.json")


def question(s: Scenario, qid: str) -> Any:
    return s.questions[qid]


def test_dates_are_read_from_stamps_spans_recall_lines_and_diary_headings() -> None:
    text = "\n".join([
        "[03/02 19:00 – 03/03 19:20] They baked rye bread.",
        "## 03/04 - memo entry\nWe flew kites.",
        "[2026-03-05] Kai: we repainted the porch",
        "no date here: aquarium",
        TAIL,
    ])
    today = today_in(text)
    assert today == date(2026, 3, 7)
    spans = {s.text.split()[-1].strip("."): s.span for s in statements(text, today)}
    assert spans["bread"] == (date(2026, 3, 2), date(2026, 3, 3))
    assert spans["kites"] == (date(2026, 3, 4), date(2026, 3, 4))
    assert spans["porch"] == (date(2026, 3, 5), date(2026, 3, 5))
    assert spans["aquarium"] == (date(2026, 3, 5), date(2026, 3, 5))  # the line above's
    assert statements("x\n\naquarium", None)[-1].span is None  # a new paragraph forgets the dates before


def test_a_question_is_no_evidence_and_a_fact_needs_its_context_words() -> None:
    s = story()
    cat = question(s, "cat")
    assert Reader("[03/02 19:03] Kai: Is your cat called Biscuit?", s).read(cat).right is False
    assert Reader("[03/02 19:03] Kai: Biscuit was loud today.", s).read(cat).right is False  # Biscuit who?
    assert Reader("[03/02 19:03] Kai: Biscuit was loud today.\n[03/02 19:04] Kai: My cat is Biscuit.", s).read(cat).right
    # The words that say what the value is may stand in the sentence beside it.
    told = "[03/03 19:03] Kai said: he finally named his bicycle. It's called Comet, because it's fast."
    assert Reader(told, s).read(question(s, "bike")).right


def test_a_time_question_is_answered_only_when_a_date_says_which_day() -> None:
    s = story()
    when = question(s, "when")  # asked on Saturday 7 March: Wednesday 4 March
    dated = f"[03/04 19:03] Kai: Today we flew kites on the dunes.\n[03/05 19:03] Kai: Today we repainted the porch.\n{TAIL}"
    assert Reader(dated, s).read(when).right
    undated = f"Kai and Suzune flew kites on the dunes and repainted the porch.\n{TAIL}"
    assert not Reader(undated, s).read(when).right
    coarse = f"[03/02 19:00 – 03/05 20:00] They flew kites and repainted the porch.\n{TAIL}"
    assert not Reader(coarse, s).read(when).right  # one span for two events
    assert not Reader(dated.replace(TAIL, ""), s).read(when).right  # no date in the prompt: no "three days ago"


def test_an_event_told_later_with_a_relative_phrase_is_dated_by_it() -> None:
    s = story()
    first = question(s, "first")  # the marathon on 03/02, told on 03/05; the kites on 03/04
    kept = f"[03/04 19:03] Kai: Today we flew kites.\n[03/05 19:03] Kai: Three days ago I ran my first marathon.\n{TAIL}"
    assert Reader(kept, s).read(first).right
    # A memory that drops "three days ago" dates the marathon by its telling: after the kites.
    lost = f"[03/04 19:03] Kai: Today we flew kites.\n[03/05 19:03] Kai said: he ran his first marathon.\n{TAIL}"
    assert not Reader(lost, s).read(first).right
    assert score(first, "The marathon came first, then the kites.", s)
    assert not score(first, "The kites came first, then the marathon.", s)


def test_an_update_outdates_the_old_value_by_its_date_and_a_correction_in_one_sentence() -> None:
    s = story()
    home = question(s, "home")
    both = f"[03/02 19:03] Kai: I live in London, in a flat.\n[03/05 19:03] Kai: I moved to Berlin.\n{TAIL}"
    assert Reader(both, s).read(home).right
    assert not Reader(f"[03/02 19:03] Kai: I live in London, in a flat.\n{TAIL}", s).read(home).right
    older = f"[03/05 19:03] Kai: I moved to Berlin.\n[03/06 19:03] Kai: I live in London, in a flat.\n{TAIL}"
    assert not Reader(older, s).read(home).right  # the stale value told later wins: not kept
    corrected = f"[03/05 19:03] Kai said: he moved from London to Berlin; he doesn't live in London anymore.\n{TAIL}"
    assert Reader(corrected, s).read(home).right


def test_an_old_value_counts_as_named_only_as_a_word_of_its_own_and_not_as_past() -> None:
    home = question(story(), "home")
    assert names_stale(home, "London, I think.") and names_stale(home, "You live in london")
    # A small model's names run together ("...ShimonosaiLondonderryImaraku..."): no value is named in them.
    assert not names_stale(home, "TokyoIsuzukaLondonderryInamadoka") and not names_stale(home, "Berlin.")
    assert not names_stale(home, "Berlin now, not London anymore.")


def test_a_guess_that_names_every_candidate_scores_zero_everywhere() -> None:
    s = story()
    guess = "Biscuit? Comet? Berlin? London? Kites? Marathon? Reykjavik? Suzune? Honestly I don't know."
    assert not any(score(q, guess, s) for q in s.questions.values())
    assert score(question(s, "cat"), "His name is Biscuit.", s)
    assert not score(question(s, "cat"), "Biscuit, or maybe Pepper.", s)  # a distractor named
    assert not score(question(s, "cat"), "Biscuit or Comet, one of those.", s)  # another value of the story
    assert not score(question(s, "home"), "London.", s)
    assert not score(question(s, "home"), "Berlin or London.", s)  # the stale value, as current
    assert score(question(s, "home"), "Berlin now, not London anymore.", s)  # the stale value as past
    assert score(question(s, "dog"), "You never told me you had a dog.", s)
    assert not score(question(s, "dog"), "I don't know... Biscuit?", s)  # a decline that guesses
    assert score(question(s, "secret"), "No idea, dear.", s) and not score(question(s, "secret"), "Reykjavik!", s)
    assert score(question(s, "told"), "Suzune told me: Reykjavik.", s)
    assert not score(question(s, "told"), "Reykjavik, I think.", s)  # without its source


def test_the_oracles_memory_work_passes_omoides_own_checks() -> None:
    s = story()
    conversation = "\n".join([
        "Conversation:",
        "[03/02 19:03] Kai: By the way, my cat is called Biscuit. He sleeps on the radiator all day.",
        "[03/02 19:03] Suzune: Mm. *She nods and wipes the counter.*",
        "[03/02 19:06] Kai: The 7:40 train from Hollow Bay to Carrow Point was late again on Friday.",
    ])
    for kind in ("reader", "writer"):
        summary = Oracle(kind, s).memory("summary", f"Summarize.\n{conversation}\n\nSummary:", 200)  # type: ignore[arg-type]
        assert "biscuit" in summary.casefold() and "[03/02 19:03]" in summary
        validate_summary(summary, name="Suzune", user="Kai")
        memo = Oracle(kind, s).memory("memo", "Journey Highlights\nMessages:\n" + conversation.split("\n", 1)[1], 200)  # type: ignore[arg-type]
        assert parse_highlights(memo)
    # The reader oracle copies only what tells a fact; the writer, knowing nothing, keeps the train too.
    reader = Oracle("reader", s).memory("summary", conversation, 200)
    writer = Oracle("writer", s).memory("summary", conversation, 200)
    assert "hollow bay" not in reader.casefold() and "hollow bay" in writer.casefold()


def test_a_scenario_file_with_a_mistake_is_refused_with_where_it_is(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"format": 1, "facts": [], "questions": [
        {"id": "q", "category": "telepathy", "ask": "?", "answer": "x"}], "events": []}))
    with pytest.raises(CommandError) as refused:
        load(bad)
    assert "questions[0]" in refused.value.message and "telepathy" in refused.value.message
    bad.write_text(json.dumps({"format": 2}))
    with pytest.raises(CommandError, match="format"):
        load(bad)
    bad.write_text("{not json")
    with pytest.raises(CommandError, match="not valid JSON"):
        load(bad)
    with pytest.raises(CommandError, match="not a scenario file"):
        load(tmp_path)


async def test_the_judge_is_asked_with_the_values_that_are_wrong() -> None:
    s = story()
    answer = Answer("home", "update", "Which city am I living in now?", "suzune", "Berlin.", True, True)
    prompt = judge_request(answer, s)[0]["content"]
    assert "london" in prompt and "Berlin." in prompt and "several possibilities" in JUDGE_PROMPT
    said = await verdict(ScriptedBackend(["CORRECT"]), answer, s)
    assert said == (True, "CORRECT")
    assert (await verdict(ScriptedBackend(["Hmm."]), answer, s))[0] is None
    assert DONT_KNOW.startswith("I don't know")


def test_the_oracles_end_of_conversation_memory_is_the_story_not_the_card_or_the_instructions() -> None:
    from omoide.world import steps

    s = story()
    card = "Suzune Aoki, 27, runs Tsuki no Shizuku, a six-seat café beside the last station of the Yamabiko line."
    messages, _ = steps.request(steps.STEPS["summary"], {
        "char": "Suzune", "char_description": card, "others": "Kai",
        "transcript": "Kai: My cat is called Biscuit and she sleeps in the bakery window.\nSuzune: Lovely."})
    task = str(messages[-1]["content"])
    for kind in ("reader", "writer"):
        written = Oracle(kind, s).memory("world.summary", task, 350)  # type: ignore[arg-type]
        assert "Biscuit" in written or kind == "reader", written
        assert "Yamabiko" not in written and "promises and plans" not in written, written


def test_a_value_is_named_as_a_whole_word_with_a_plural_or_possessive_ending_only() -> None:
    s = story(questions=[{"id": "walk", "category": "single", "ask": "Will you walk with me?", "answer": "come",
                          "needs": ["cat"]}], events=[])
    walk = question(s, "walk")
    assert not score(walk, "Comet.", s)  # a longer word is another word
    assert score(walk, "I'll come.", s) and score(walk, "She comes along.", s)
    cat = question(story(), "cat")
    assert not Reader("[03/02 19:03] Kai: My cat is Biscuitine.", story()).read(cat).right
    assert Reader("[03/02 19:03] Kai: My cat's name? Biscuit's the one.", story()).read(cat).right
    # The words that say what a value is stay stems: "translat" finds "translating".
    job = parse({"format": 1, "facts": [{"id": "job", "evidence": [["finnish"], ["translat"]]}],
                 "questions": [{"id": "job", "category": "indirect", "ask": "What do I do?", "answer": "finnish",
                                "needs": ["job"]}]})
    assert Reader("[03/02 19:03] Kai: I am translating Finnish novels.", job).read(question(job, "job")).right


def test_a_fact_credited_to_the_wrong_speaker_in_memory_is_not_kept() -> None:
    s = parse({"format": 1, "user": "Kai", "host": "suzune",
               "facts": [{"id": "mum", "evidence": [["nagasaki"], ["mother"]]},
                         {"id": "hers", "evidence": [["matsue"], ["grew"]], "said_by": "character"}],
               "questions": [{"id": "mum", "category": "single", "ask": "Where does my mum sing?", "answer": "nagasaki",
                              "needs": ["mum"]},
                             {"id": "hers", "category": "self", "ask": "Where are you from?", "answer": "matsue",
                              "needs": ["hers"]}],
               "events": [{"user": "My mother sings in a hotel bar in Nagasaki.", "fact": "mum"}]})
    mum, hers = question(s, "mum"), question(s, "hers")
    assert not Reader("[03/02 19:03] Suzune said: my mother sings in a hotel bar in Nagasaki.", s).read(mum).right
    assert Reader("[03/02 19:03] Kai said: their mother sings in a hotel bar in Nagasaki.", s).read(mum).right
    assert Reader("[03/02 19:03] Suzune said: Kai's mother sings in Nagasaki.", s).read(mum).right  # named: right
    assert not Reader("[03/02 19:03] Kai said: I grew up in Matsue.", s).read(hers).right
    assert Reader("[03/02 19:03] Suzune: I grew up in Matsue.", s).read(hers).right


def test_a_fact_after_a_blank_line_in_a_message_is_read_with_its_messages_date() -> None:
    s = story()
    when = question(s, "when")  # asked on Saturday 7 March: the kites on Wednesday 4 March
    reply = "<assistant>\n[03/04 19:03] *She laughs.* What a day.\n\n*Later.* Today we flew kites on the dunes.\n"
    assert Reader(f"{reply}<system>\n{TAIL}\n", s).read(when).right
    # A summary's undated paragraph takes no date from the paragraph before it.
    summary = "<system>\n[03/04 19:00 – 03/04 20:00] They talked.\n\nToday we flew kites on the dunes.\n"
    assert not Reader(f"{summary}{TAIL}\n", s).read(when).right
    # A reply with no stamp answers the line before it, at its time (the prompt stamps no such reply)...
    answered = "<user>\n[03/04 19:03] Hello.\n<assistant>\nWhat a day.\n\nToday we flew kites on the dunes.\n"
    assert Reader(f"{answered}<system>\n{TAIL}\n", s).read(when).right
    # ...but a message of the user's with no stamp takes no date from the one before it.
    undated = "<assistant>\n[03/04 19:03] Hello.\n<user>\nWhat a day.\n\nToday we flew kites on the dunes.\n"
    assert not Reader(f"{undated}<system>\n{TAIL}\n", s).read(when).right
