"""The lorebook engine, one rule at a time, and the lorebook files it reads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from omoide.characters.lorebook import load_lorebook_file, scan
from omoide.characters.model import LoreEntry, Lorebook
from omoide.errors import CharacterError

CARDS = Path(__file__).parents[1] / "data" / "cards"


def entry(*keys: str, content: str = "", **kwargs: object) -> LoreEntry:
    return LoreEntry(keys=list(keys), content=content or f"about {keys[0] if keys else 'nothing'}", **kwargs)  # type: ignore[arg-type]


def fired(book: Lorebook, *texts: str) -> list[str]:
    return [f.entry.content for f in scan(book, list(texts))]


def test_no_lorebook_fires_nothing() -> None:
    assert scan(None, ["anything"]) == []


def test_a_key_in_a_recent_message_fires_and_says_where() -> None:
    book = Lorebook([entry("lighthouse")])
    result = scan(book, ["We walked to the lighthouse.", "It was cold."])
    assert [f.entry.keys for f in result] == [["lighthouse"]]
    assert result[0].key == "lighthouse" and result[0].message_age == 1
    assert result[0].reason == "key 'lighthouse' in message 2 from the end"
    assert scan(book, ["The lighthouse!"])[0].reason == "key 'lighthouse' in the last message"


def test_disabled_entries_never_fire() -> None:
    book = Lorebook([entry("cat", enabled=False), entry(content="always", constant=True, enabled=False)])
    assert fired(book, "a cat") == []


def test_constant_entries_always_fire() -> None:
    book = Lorebook([entry(content="The sea is cold.", constant=True), entry("cat")])
    result = scan(book, ["nothing relevant"])
    assert [(f.entry.content, f.reason) for f in result] == [("The sea is cold.", "constant")]


def test_only_the_last_scan_depth_messages_are_scanned() -> None:
    book = Lorebook([entry("anchor")], scan_depth=2)
    assert fired(book, "the anchor", "two", "three") == []
    assert fired(book, "one", "the anchor", "three") == ["about anchor"]
    assert fired(Lorebook([entry("anchor")], scan_depth=0), "anchor") == []


def test_keys_ignore_case_unless_the_entry_is_case_sensitive() -> None:
    assert fired(Lorebook([entry("Mochi")]), "mochi is asleep") == ["about Mochi"]
    assert fired(Lorebook([entry("Mochi", case_sensitive=True)]), "mochi is asleep") == []
    assert fired(Lorebook([entry("Mochi", case_sensitive=True)]), "Mochi is asleep") == ["about Mochi"]


@pytest.mark.parametrize(
    ("key", "text", "fires"),
    [
        ("cat", "the cat's bowl", True),
        ("cat", "Cat!", True),
        ("cat", "concatenate", False),
        ("cat", "cats", False),
        ("blue mug", "her blue  mug", False),
        ("blue mug", "the blue mug, chipped", True),
        ("猫", "黒猫が寝ている", True),
        ("café", "au café.", True),
        ("café", "cafés", False),
        ("C++", "I write C++ at work", True),
        ("  station  ", "to the station", True),
    ],
)
def test_plain_keys_match_whole_words_and_phrases(key: str, text: str, fires: bool) -> None:
    assert bool(fired(Lorebook([entry(key)]), text)) is fires


def test_regex_keys_by_flag_or_by_slashes() -> None:
    assert fired(Lorebook([entry(r"fog(horn)?s?", use_regex=True)]), "FOGHORNS at night") == ["about fog(horn)?s?"]
    assert fired(Lorebook([entry("/fog(horn)?/")]), "Foghorn") == []
    assert fired(Lorebook([entry("/fog(horn)?/i")]), "Foghorn") == ["about /fog(horn)?/i"]
    assert fired(Lorebook([entry(r"/\bmug\b/")]), "smug") == []


def test_an_invalid_regex_skips_the_key_with_a_reason_and_never_raises() -> None:
    broken = entry("/(unclosed/", content="broken")
    rescued = entry("[bad", "lamp", use_regex=True, content="rescued")
    result = scan(Lorebook([broken, rescued]), ["the lamp is lit (unclosed"])
    assert [f.entry.content for f in result] == ["rescued"]
    assert [(s.entry.content, "invalid regex" in s.reason) for s in result.skipped] == [("broken", True)]


def test_selective_entries_also_need_a_secondary_key() -> None:
    book = Lorebook([entry("mug", secondary_keys=["blue", "chipped"], selective=True)])
    assert fired(book, "pass me a mug") == []
    result = scan(book, ["the chipped one", "pass me a mug"])
    assert len(result) == 1 and "secondary key 'chipped' in message 2 from the end" in result[0].reason
    # Secondary keys without `selective` change nothing; `selective` without any is plain.
    assert fired(Lorebook([entry("mug", secondary_keys=["blue"])]), "a mug") == ["about mug"]
    assert fired(Lorebook([entry("mug", selective=True)]), "a mug") == ["about mug"]


def test_fired_entries_come_in_insertion_order() -> None:
    book = Lorebook([entry("c", insertion_order=30), entry("a", insertion_order=10), entry(content="k", constant=True, insertion_order=20)])
    assert fired(book, "a b c") == ["about a", "k", "about c"]


def test_over_budget_the_lowest_priority_goes_first_then_the_latest() -> None:
    one_token = lambda text: 1  # noqa: E731
    book = Lorebook(
        [entry("a", priority=5, insertion_order=1), entry("b", priority=1, insertion_order=2),
         entry("c", priority=5, insertion_order=3), entry("d", priority=9, insertion_order=4)],
        token_budget=2,
    )
    result = scan(book, ["a b c d"], count_tokens=one_token)
    assert [f.entry.keys[0] for f in result] == ["a", "d"]
    assert [(s.entry.keys[0], s.reason) for s in result.skipped] == [("b", "over the token budget (2)"), ("c", "over the token budget (2)")]
    book.token_budget = 4
    assert len(scan(book, ["a b c d"], count_tokens=one_token)) == 4


def test_the_budget_uses_the_given_token_counter() -> None:
    book = Lorebook([entry("a", content="x" * 100), entry("b", content="short", priority=20)], token_budget=10)
    assert fired(book, "a b") == ["short"]
    assert [f.entry.content for f in scan(book, ["a b"], count_tokens=lambda t: 1)] == ["x" * 100, "short"]


def test_a_result_is_a_plain_list_for_callers() -> None:
    result = scan(Lorebook([entry(content="k", constant=True)]), [])
    assert isinstance(result, list) and result[0].reason == "constant" and result.skipped == []


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(max_size=12), max_size=4), st.booleans(), st.booleans(), st.lists(st.text(max_size=30), max_size=5))
def test_any_keys_and_messages_never_raise(keys: list[str], use_regex: bool, case_sensitive: bool, texts: list[str]) -> None:
    book = Lorebook([LoreEntry(keys=keys, content="c", use_regex=use_regex, case_sensitive=case_sensitive,
                               secondary_keys=keys[::-1], selective=True)])
    scan(book, texts)


# -- lorebook files -------------------------------------------------------------------------


def test_sillytavern_world_info_is_read_with_every_field_kept() -> None:
    book = load_lorebook_file(CARDS / "world_harbour.json")
    assert book.name == "world_harbour" and len(book.entries) == 4
    harbour, bell, ghost, lamp = book.entries
    assert harbour.keys == ["harbour", "harbor"] and harbour.name == "Harbour" and harbour.id == 0
    assert harbour.extensions["probability"] == 100 and harbour.extensions["position"] == 0
    assert bell.selective and bell.secondary_keys == ["fog"] and bell.insertion_order == 50
    assert not ghost.enabled and lamp.constant and lamp.keys == ["lamp", "lantern"]
    assert fired(book, "the fog at the harbor", "ring the bell") == ["Lamps burn whale oil.", "The bell rings twice in fog.", "The harbour freezes in February."]


def test_a_cards_character_book_and_a_v3_lorebook_file_are_read(tmp_path: Path) -> None:
    orin_book = json.loads((CARDS / "v2_orin.json").read_text())["data"]["character_book"]
    plain = tmp_path / "book.json"
    plain.write_text(json.dumps(orin_book))
    wrapped = tmp_path / "v3.json"
    wrapped.write_text(json.dumps({"spec": "lorebook_v3", "data": orin_book}))
    card = tmp_path / "card.json"
    card.write_text((CARDS / "v2_orin.json").read_text())
    for path in (plain, wrapped, card):
        book = load_lorebook_file(path)
        assert book.name == "Workshop" and [e.name for e in book.entries] == ["Music box", "Rain"]


def test_a_lorebook_toml_is_read(tmp_path: Path) -> None:
    path = tmp_path / "lore.toml"
    path.write_text('scan_depth = 2\n[[entries]]\nkeys = ["x"]\ncontent = "about x"\nuse_regex = true\n')
    book = load_lorebook_file(path)
    assert book.scan_depth == 2 and book.entries[0].use_regex


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("{oops", "not valid JSON"),
        ("[1]", "not an object"),
        ('{"name": "no entries"}', "no lorebook entries"),
        ('{"entries": {"0": {"key": 5, "content": ""}}}', "'key' must be a list"),
        ('{"entries": {"0": {"key": [], "content": "", "disable": "no"}}}', "'disable' must be true or false"),
        ('{"entries": [{"keys": [], "content": 3}]}', "'content' must be text"),
    ],
)
def test_bad_lorebook_files_get_a_clear_error(tmp_path: Path, content: str, problem: str) -> None:
    path = tmp_path / "world.json"
    path.write_text(content)
    with pytest.raises(CharacterError) as info:
        load_lorebook_file(path)
    assert problem in info.value.message and str(path) in info.value.message and info.value.hint


def test_a_missing_lorebook_file_is_a_character_error(tmp_path: Path) -> None:
    with pytest.raises(CharacterError, match="Cannot read the lorebook"):
        load_lorebook_file(tmp_path / "nope.json")


def test_a_book_without_a_budget_follows_the_given_share_of_the_context() -> None:
    book = Lorebook([entry("harbour", content="x" * 4000)])  # about 1,000 tokens; no token_budget, as most cards
    assert book.token_budget is None
    assert fired_with(book, budget=2048) == ["x" * 4000]  # 25% of an 8k context
    result = scan(book, ["the harbour"], budget=500)
    assert list(result) == [] and "over the token budget (500)" in result.skipped[0].reason


def test_keyed_entries_are_dropped_before_constant_ones_and_a_dropped_constant_says_so() -> None:
    one_token = lambda text: 1  # noqa: E731
    book = Lorebook([
        entry(content="always A", constant=True, insertion_order=1, priority=1),
        entry("b", insertion_order=2, priority=50),
        entry(content="always C", constant=True, insertion_order=3, priority=1),
    ])
    result = scan(book, ["b"], count_tokens=one_token, budget=2)
    assert [f.entry.content for f in result] == ["always A", "always C"]
    assert [s.entry.keys for s in result.skipped] == [["b"]]
    result = scan(book, ["b"], count_tokens=one_token, budget=1)
    assert [f.entry.content for f in result] == ["always A"]
    assert "a constant entry, dropped only after every keyed one" in result.skipped[-1].reason


def fired_with(book: Lorebook, *, budget: int) -> list[str]:
    return [f.entry.content for f in scan(book, ["the harbour"], budget=budget)]
