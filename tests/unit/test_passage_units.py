"""The pure parts of memories that come to mind: the query, its bound, the cut,
and the preference for the user's lines over the character's own."""

from __future__ import annotations

from datetime import UTC, datetime

from omoide.domain.chat import Message, Role
from omoide.memory.passages import (MATCH_BUDGET, PASSAGE_CHARS, Passage, Voices, closeness, cut, distinctive, latest_terms,
                                     latest_text, with_a_place_for_meaning)

WHEN = datetime(2026, 3, 4, 19, 3, tzinfo=UTC)


def message(i: int, role: Role, text: str) -> Message:
    return Message(i, 1, i - 1, role, text, WHEN, depth=i)


def test_the_query_is_the_latest_messages_content_words_newest_first_without_names_or_stop_words() -> None:
    window = [message(1, Role.USER, "Old talk about submarines."), message(2, Role.USER, "The lighthouse, Mika."),
              message(3, Role.ASSISTANT, "Mika smiles: the harbour?"), message(4, Role.USER, "Kai bought a collar for the cat.")]
    terms = latest_terms(window, ["Kai", "Mika"])
    assert terms[:3] == ["bought", "collar", "cat"]
    assert "harbour" in terms and "lighthouse" in terms
    assert "submarines" not in terms, "only the latest three messages"
    assert not {"kai", "mika", "the", "for"} & set(terms)


def test_what_meaning_is_measured_against_is_the_newest_message_less_the_speakers_names() -> None:
    window = [message(1, Role.USER, "The lighthouse."), message(2, Role.USER, "Mika, how is my bike doing, Kai wonders?")]
    assert latest_text(window, ["Kai", "Mika Aoki"]) == ", how is my bike doing, wonders?"
    assert latest_text(window) == "Mika, how is my bike doing, Kai wonders?"  # the search baseline's, as a peer's
    assert latest_text([message(3, Role.USER, "Mika?")], ["Mika"]) == "?"


def test_only_the_rarest_words_within_the_match_budget_are_searched() -> None:
    frequency = {"cat": 12, "tea": MATCH_BUDGET - 5, "the": 50_000, "zeppelin": 0}
    assert distinctive(["the", "tea", "cat", "zeppelin"], frequency) == ["cat"]
    assert distinctive(["tea"], frequency) == ["tea"]
    assert distinctive(["the"], frequency) == []


def test_a_long_message_is_cut_around_its_first_matched_word_at_word_ends() -> None:
    text = " ".join(f"word{i}" for i in range(200)) + " the radiator is warm " + " ".join(f"more{i}" for i in range(200))
    piece = cut(text, ["radiator"])
    assert "radiator" in piece and piece.startswith("…") and piece.endswith("…")
    assert len(piece) <= PASSAGE_CHARS + 2
    assert all(w.startswith(("word", "more", "…word", "…more")) or w in {"the", "radiator", "is", "warm"} for w in piece.strip("…").split())
    assert cut("Short  and\nsweet.", ["sweet"]) == "Short and sweet."


def test_who_said_it_and_whose_own_voice_it_is() -> None:
    alone = Voices("Kai", "Mika")
    assert alone.who("user", None) == "Kai" and alone.who("assistant", None) == "Mika"
    assert alone.own("assistant", None) and not alone.own("user", None)
    scene = Voices("Kai", "Wren", me="wren", host="suzune", names={"suzune": "Suzune", "wren": "Wren"})
    assert scene.who("assistant", None) == "Suzune" and scene.who("assistant", "wren") == "Wren"
    assert scene.own("assistant", "wren") and not scene.own("assistant", None)


def passage(message_id: int, score: float, *matched: str) -> Passage:
    return Passage(message_id, datetime(2026, 3, 1, tzinfo=UTC), "Kai", f"line {message_id}", matched, score, 0.6, 1.0,
                   score)


def test_the_best_passage_found_by_meaning_alone_gets_the_last_place_and_the_word_matches_the_others() -> None:
    ranked = [passage(1, 0.8, "rye"), passage(2, 0.24, "concert"), passage(3, 0.21, "harbour"), passage(4, 0.14),
              passage(5, 0.1)]
    assert [p.message_id for p in with_a_place_for_meaning(ranked, 3)] == [1, 2, 4, 3, 5]
    assert [p.message_id for p in with_a_place_for_meaning(ranked, 1)] == [1, 2, 3, 4, 5]
    early = [passage(4, 0.9), *ranked[:3]]
    assert with_a_place_for_meaning(early, 3) == early


def test_a_cosine_counts_by_how_far_it_is_above_the_floor() -> None:
    assert closeness(None) == 0.0 and closeness(0.1) == 0.0
    assert closeness(1.0) == 1.0 and 0.3 < closeness(0.42) < 0.33
