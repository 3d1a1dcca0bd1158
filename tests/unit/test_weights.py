"""Weight and decay, mentions, the weighted diary selection (a fixed clock
throughout), the inline tags' attributes, /remember's importance, the profile text."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from omoide.characters.model import Character
from omoide.tui.command_line import parse_remember
from omoide.domain.chat import DiaryAuthor, DiaryEntry, MemoryState, Mention, Profile
from omoide.errors import CommandError
from omoide.memory.diary import MemoryNote
from omoide.memory.inline import InlineTagFilter
from omoide.memory.recall import rank, query_terms
from omoide.memory.weights import entry_lines, keywords, mentioned, select_weighted, strength, strengths
from omoide.world.profile import parse_text, prompt_section, render_text
from omoide.memory.prompt.layers import assemble
from omoide.memory.prompt.model import PromptContext
from omoide.store.recall import Candidate

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)


def entry(i: int, text: str, *, days_ago: float, importance: int | None = None) -> DiaryEntry:
    return DiaryEntry(i, 1, 100 + i, text, DiaryAuthor.CHARACTER, NOW - timedelta(days=days_ago), importance=importance)


# -- strength --------------------------------------------------------------------------


def test_strength_halves_every_half_life_and_a_mention_raises_it() -> None:
    written = NOW - timedelta(days=30)
    assert strength(4, written, [], now=NOW, half_life_days=30) == pytest.approx(2.0)
    assert strength(4, written, [], now=NOW, half_life_days=60) == pytest.approx(4 * 2 ** -0.5)
    mentioned_today = strength(4, written, [NOW], now=NOW, half_life_days=30)
    mentioned_long_ago = strength(4, written, [written + timedelta(days=1)], now=NOW, half_life_days=30)
    assert mentioned_today == pytest.approx(3.0)
    assert 2.0 < mentioned_long_ago < mentioned_today


def test_a_mention_after_the_clock_does_not_count_yet() -> None:
    assert strength(3, NOW, [NOW + timedelta(hours=1)], now=NOW, half_life_days=30) == pytest.approx(3.0)


def test_entries_without_importance_get_the_default() -> None:
    assert strength(None, NOW, [], now=NOW, half_life_days=30) == 3


def test_mentions_count_for_the_original_of_a_kept_copy() -> None:
    original = entry(1, "The lighthouse promise", days_ago=10, importance=5)
    kept = DiaryEntry(9, 1, 200, original.content, DiaryAuthor.CHARACTER, original.created_at, importance=5, origin_id=1)
    mention = Mention(1, "diary", 1, 150, NOW)
    assert strengths([kept], [mention], now=NOW, half_life_days=30)[9] == pytest.approx(5 * 0.5 ** (10 / 30) + 1)


# -- mentions ----------------------------------------------------------------------------


def test_a_message_mentions_a_memory_when_it_shares_two_of_its_keywords() -> None:
    memories = [(1, "Kai told me about his grandmother's lighthouse on the northern cape."), (2, "Coriander, never again.")]
    assert mentioned("Do you remember the lighthouse on the cape?", memories, exclude=["Kai", "Mika"]) == [1]
    assert mentioned("I climbed a lighthouse once.", memories, exclude=["Kai", "Mika"]) == []
    assert mentioned("Ugh, coriander again!", memories, exclude=["Kai", "Mika"]) == [2], "one keyword is enough for a one-keyword memory"


def test_names_and_common_words_never_make_a_mention() -> None:
    memories = [(1, "Kai said that Mika would always be there.")]
    assert keywords("Kai said that Mika would always be there.", exclude=["Kai", "Mika"]) == {"alway"}  # stemmed, crudely
    assert mentioned("Mika, Kai would say that there, right?", memories, exclude=["Kai", "Mika"]) == []


def test_plurals_and_past_tense_still_mention() -> None:
    assert mentioned("He promised to feed the kittens", [(1, "I promise I'll feed his kitten")], exclude=[]) == [1]


# -- the weighted selection ------------------------------------------------------------------


def test_the_weighted_selection_keeps_the_strongest_entries_in_date_order() -> None:
    entries = [
        entry(1, "The night he cried on the pier.", days_ago=60, importance=5),  # 5 * 0.25 = 1.25
        entry(2, "He had toast.", days_ago=40, importance=1),
        entry(3, "We argued about the map.", days_ago=30, importance=3),  # 1.5
        entry(4, "He ordered tea.", days_ago=1, importance=1),
        entry(5, "He asked me to the festival!", days_ago=2, importance=4),
    ]
    power = strengths(entries, [], now=NOW, half_life_days=30)
    chosen = select_weighted(entries, power, limit=3 * 2)
    assert [e.id for e in chosen] == [1, 3, 5], "three whole entries of two lines, strongest first, shown oldest first"


def test_decay_lets_a_fresh_ordinary_entry_beat_an_old_important_one() -> None:
    old = entry(1, "The night he cried on the pier.", days_ago=120, importance=5)  # 5 / 16
    fresh = entry(2, "He ordered tea.", days_ago=0, importance=1)
    chosen = select_weighted([old, fresh], strengths([old, fresh], [], now=NOW, half_life_days=30), limit=2)
    assert [e.id for e in chosen] == [2]


def test_a_mention_brings_an_old_entry_back_into_the_prompt() -> None:
    old = entry(1, "The night he cried on the pier.", days_ago=120, importance=5)
    fresh = entry(2, "He ordered tea.", days_ago=0, importance=1)
    mentions = [Mention(1, "diary", 1, 500, NOW - timedelta(hours=1))]
    chosen = select_weighted([old, fresh], strengths([old, fresh], mentions, now=NOW, half_life_days=30), limit=2)
    assert [e.id for e in chosen] == [1]


def test_when_everything_fits_nothing_is_dropped_and_the_order_is_kept() -> None:
    entries = [entry(i, f"entry {i}", days_ago=10 - i, importance=1 + i % 5) for i in range(5)]
    assert select_weighted(entries, {}, limit=100) == entries


def test_the_line_count_is_the_callers_to_say() -> None:
    entries = [entry(1, "a\nb\nc", days_ago=1, importance=5), entry(2, "d", days_ago=1, importance=1)]
    assert entry_lines(entries[0]) == 4
    power = strengths(entries, [], now=NOW, half_life_days=30)
    assert [e.id for e in select_weighted(entries, power, limit=1, lines=lambda e: 1)] == [1]


def test_the_default_rule_is_still_the_last_lines_and_weighted_is_opt_in() -> None:
    entries = [entry(1, "The night he cried on the pier.", days_ago=120, importance=5),
               *[entry(i, f"ordinary day {i}", days_ago=1, importance=1) for i in range(2, 6)]]
    state = MemoryState(summary=None, new_diary=entries)
    base = dict(character=Character(id="m", name="Mika"), diary_lines=2, now=NOW)
    recent = assemble(PromptContext(**base), state).messages[-1]["content"]  # type: ignore[arg-type]
    assert "cried on the pier" not in recent and "ordinary day 5" in recent
    power = strengths(entries, [], now=NOW - timedelta(days=120), half_life_days=30)
    weighted = assemble(PromptContext(**base, diary_selection="weighted", strengths=power), state)  # type: ignore[arg-type]
    assert "cried on the pier" in weighted.messages[-1]["content"]
    assert [round(v or 0, 2) for _, _, v in weighted.memories] == [5.0, 1.0]


# -- inline tags and notes -----------------------------------------------------------------


REPLY = 'Sure.<save_memory importance="5" emotion=joy about_user="true">Kai is allergic to cats.</save_memory> <recall>the pier</recall>Right.'


@given(st.lists(st.integers(min_value=1, max_value=len(REPLY) - 1), max_size=10))
def test_tags_with_attributes_come_out_whole_however_the_stream_is_cut(cuts: list[int]) -> None:
    points = sorted(set(cuts))
    f = InlineTagFilter(("save_memory", "recall"))
    shown, tags = "", []
    for a, b in zip([0, *points], [*points, len(REPLY)], strict=True):
        v, t = f.feed(REPLY[a:b])
        shown, tags = shown + v, tags + t
    v, t = f.flush()
    assert shown + v == "Sure. Right."
    assert [(t.name, t.text, t.attrs) for t in tags + t] == [
        ("save_memory", "Kai is allergic to cats.", {"importance": "5", "emotion": "joy", "about_user": "true"}),
        ("recall", "the pier", {}),
    ]


def test_a_long_angle_bracket_run_is_text_not_a_tag() -> None:
    f = InlineTagFilter(("recall",))
    text = "<recall " + "x" * 400 + " and more"
    visible, tags = f.feed(text)
    rest, more = f.flush()
    assert visible + rest == text and not tags + more


def test_notes_read_their_arguments_leniently() -> None:
    assert MemoryNote.from_arguments({"content": "x", "importance": "9", "emotion": "Quiet joy!", "about_user": "yes"}) == MemoryNote("x", 5, "quiet", True)
    assert MemoryNote.from_arguments({"content": "x", "importance": "lots", "emotion": 3, "about_user": 1}) == MemoryNote("x", None, None, False)


def test_remember_takes_a_bang_or_an_importance() -> None:
    assert parse_remember("! She cried at the station") == (5, "She cried at the station")
    assert parse_remember("--importance 2 toast") == (2, "toast")
    assert parse_remember("the usual") == (None, "the usual")
    with pytest.raises(CommandError, match="not an importance"):
        parse_remember("--importance 7 too much")


# -- the profile -------------------------------------------------------------------------------


def test_the_profile_text_round_trips_and_reaches_the_prompt_as_written() -> None:
    fields, facts = parse_text("name: Kai\naddress: Captain\npronouns: he/him\n# comment\n- allergic to cats\n-  works   night shifts\n")
    assert fields == {"name": "Kai", "address": "Captain", "pronouns": "he/him"}
    assert facts == ["allergic to cats", "works night shifts"]
    assert parse_text(render_text(Profile(name="Kai")))[0]["name"] == "Kai"
    section = prompt_section(Profile(name="Kai", pronouns="he/him"))
    assert "Name: Kai" in section and "Pronouns: he/him" in section and "Call them" not in section
    assert prompt_section(Profile()) == ""


def test_a_profile_line_that_is_not_understood_is_named() -> None:
    with pytest.raises(CommandError, match="Line 2") as info:
        parse_text("name: Kai\nfavourite colour: red\n")
    assert "- a fact" in info.value.hint


# -- recall ranking -------------------------------------------------------------------------------


def candidate(i: int, relevance: float, days_ago: float) -> Candidate:
    return Candidate("message", i, i, i, "user", NOW - timedelta(days=days_ago), f"hit {i}", relevance)


def test_recall_ranks_by_relevance_and_recency() -> None:
    ranked = rank([candidate(1, 10.0, 300), candidate(2, 10.0, 1), candidate(3, 2.0, 0)], now=NOW, half_life_days=30)
    assert [c.id for c, _ in ranked] == [2, 1, 3], "same relevance: the recent first; a weak hit stays last however fresh"


def test_recall_queries_drop_common_words() -> None:
    assert query_terms("What was the name of the lighthouse keeper, the old one?") == ["name", "lighthouse", "keeper", "old"]
    # words that say when, not what: a day asked about comes back by its own rule (memory/days.py)
    assert query_terms("What did you paint recently? The one from two weeks ago, lately?") == ["paint", "two", "weeks"]
