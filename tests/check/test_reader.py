"""The ideal reader and the scoring, on prompts written by hand; the oracle's
memory work, through omoide's own validators; the judge."""

from __future__ import annotations

from datetime import date

from omoide.check.judge import JUDGE_PROMPT, judge_request, verdict
from omoide.check.oracle import answer_memory
from omoide.check.reader import DONT_KNOW, read, score, sightings, today_in
from omoide.check.results import Answer
from omoide.check.script import probe
from omoide.memory.memos import parse_highlights
from omoide.memory.summary import validate_summary
from tests.scripted import ScriptedBackend

TAIL = "Current date and time: Saturday 07 March 2026, 19:05."


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
    assert sightings(text, "rye bread", today)[0].span == (date(2026, 3, 2), date(2026, 3, 3))
    assert sightings(text, "kites", today)[0].span == (date(2026, 3, 4), date(2026, 3, 4))
    assert sightings(text, "porch", today)[0].span == (date(2026, 3, 5), date(2026, 3, 5))
    assert sightings(text, "aquarium", today)[0].span == (date(2026, 3, 5), date(2026, 3, 5))  # the line above's
    assert sightings("x\n\naquarium", "aquarium")[0].span is None  # a new paragraph forgets the dates before


def test_a_time_question_is_answered_only_when_a_date_says_which_day() -> None:
    three = probe("three_days")  # asked on Saturday 7 March: Wednesday 4 March
    dated = f"[03/04 19:03] Kai: Today we flew kites on the dunes.\n[03/05 19:03] Kai: Today we repainted the porch.\n{TAIL}"
    assert score(three, read(three, dated))
    undated = f"Kai and Suzune flew kites on the dunes and repainted the porch.\n{TAIL}"
    assert not score(three, read(three, undated))
    coarse = f"[03/02 19:00 – 03/05 20:00] They flew kites and repainted the porch.\n{TAIL}"
    assert read(three, coarse) == "I'm not sure which of those days it was."  # one span for two events
    assert not score(three, read(three, dated.replace(TAIL, "")))  # no date in the prompt: no "three days ago"


def test_an_updated_fact_is_answered_with_the_newest_value() -> None:
    home = probe("home")
    text = f"[03/02 19:03] Kai: I live in London.\n[03/05 19:03] Kai: I moved to Berlin.\n{TAIL}"
    assert "Berlin" in read(home, text) and score(home, read(home, text))
    stale = f"[03/02 19:03] Kai: I live in London.\n{TAIL}"
    assert not score(home, read(home, stale))


def test_scoring_is_containment_with_refusals_and_abstention() -> None:
    told, invited, dog = probe("told"), probe("invited"), probe("dog")
    assert score(told, "Suzune told me: Reykjavik, the observatory.")
    assert not score(told, "Reykjavik, I think.")  # without its source
    assert score(invited, "No idea, dear.") and not score(invited, "The observatory in Reykjavik!")
    assert score(dog, "You never told me you had a dog.") and not score(dog, "His name is Rex.")
    assert read(dog, "anything at all") == DONT_KNOW


def test_the_oracles_memory_work_passes_omoides_own_checks() -> None:
    material = "\n".join([
        "[03/02 19:03] Kai: By the way, my cat is called Biscuit. I love him.",
        "[03/02 19:04] Suzune: Mm.",
        "[03/02 19:06] Kai: I live in London these days, I think I'll stay.",
        "[03/02 19:09] Kai: Today we went to the aquarium on the pier together. I loved it.",
    ])
    summary = answer_memory("summary", f"Summarize ...\nConversation:\n{material}\n\nSummary:")
    kept = validate_summary(summary, name="Suzune", user="Kai")
    assert "[03/02 19:03] Kai said: By the way, his cat is called Biscuit." in kept and "London" in kept
    memo = answer_memory("memo", f"Journey Highlights ...\nMessages:\n{material}\n\nJourney Highlights:")
    highlights = parse_highlights(memo, material)
    assert len(highlights) == 3 and any("aquarium" in h for h in highlights)
    assert answer_memory("world.offscreen", "What Kai said: nothing of note") == "NOTHING"


async def test_the_judge_is_asked_with_its_printed_prompt_and_its_word_is_read() -> None:
    answer = Answer("cat", "single", "What is my cat called?", "suzune", "Biscuit, of course.", True, True)
    request = judge_request(answer)
    assert request[0]["content"] == JUDGE_PROMPT.format(question=answer.question, truth="Biscuit", answer=answer.answer)
    judge = ScriptedBackend([["CORRECT"], ["Wrong."], ["Hmm, maybe"], [TimeoutError()]])
    assert await verdict(judge, answer) == (True, "CORRECT")
    assert await verdict(judge, answer) == (False, "Wrong.")
    assert (await verdict(judge, answer))[0] is None  # no verdict is not a verdict
    assert (await verdict(judge, answer))[0] is None
