"""Character folders, the TOML they are written in, the library, and the
characters shipped with omoide."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from omoide import locations
from omoide.characters import tomlwrite
from omoide.characters.folder import load_character_folder, save_character_folder, tidy
from omoide.characters.library import default_character, find_character, list_characters, scan_characters, source_kind
from omoide.characters.lorebook import scan
from omoide.characters.model import Character, LoreEntry, Lorebook, substitute
from omoide.errors import CharacterError

SHIPPED = ["suzune", "wren"]


def write(folder: Path, toml: str, lorebook: str | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "character.toml").write_text(toml, encoding="utf-8")
    if lorebook is not None:
        (folder / "lorebook.toml").write_text(lorebook, encoding="utf-8")
    return folder


def full_character(character_id: str = "mika") -> Character:
    return Character(
        id=character_id, name="Mika", nickname="Mi", description="{{char}} paints\nboats.", personality="Bright.",
        scenario="A dock.", first_message="*waves* Hi {{user}}!", alternate_greetings=["Yo.", "Two\nlines"],
        example_dialogue="<START>\n{{user}}: Hi\n{{char}}: *grins*", system_prompt="{{original}} Be brief.",
        post_history_instructions="Stay in character.", creator_notes="For tests.", tags=["art", "sea"],
        creator="tests", character_version="2",
        character_book=Lorebook([LoreEntry(keys=["boat", "/sk(iff|ip)/i"], content="The boat is named Gull.", name="Boat",
                                           secondary_keys=["sail"], selective=True, case_sensitive=True, use_regex=False,
                                           constant=False, enabled=False, insertion_order=-3, priority=7)],
                                name="Dock", scan_depth=6, token_budget=99),
    )


def comparable(c: Character) -> Character:
    c.source, c.bundled = None, False
    return c


# -- the folder format ------------------------------------------------------------------------


def test_a_saved_folder_loads_back_as_the_same_character(tmp_path: Path) -> None:
    original = full_character()
    save_character_folder(original, tmp_path / "mika")
    loaded = load_character_folder(tmp_path / "mika")
    assert comparable(loaded) == comparable(full_character())
    assert loaded.id == "mika"


def test_the_files_are_readable_toml_with_multi_line_text(tmp_path: Path) -> None:
    save_character_folder(full_character(), tmp_path / "mika")
    text = (tmp_path / "mika" / "character.toml").read_text(encoding="utf-8")
    assert "description = '''\n{{char}} paints\nboats.\n'''" in text
    assert 'name = "Mika"' in text and 'version = "2"' in text
    lore = (tmp_path / "mika" / "lorebook.toml").read_text(encoding="utf-8")
    assert "[[entries]]" in lore and 'keys = ["boat", "/sk(iff|ip)/i"]' in lore and "enabled = false" in lore


def test_saving_over_a_folder_keeps_files_omoide_does_not_write(tmp_path: Path) -> None:
    folder = tmp_path / "mika"
    save_character_folder(full_character(), folder)
    (folder / "card.png").write_bytes(b"image")
    (folder / "notes").mkdir()
    (folder / "notes" / "ideas.md").write_text("more boats")
    changed = full_character()
    changed.description = "New."
    changed.character_book = None
    save_character_folder(changed, folder)
    assert (folder / "card.png").read_bytes() == b"image" and (folder / "notes" / "ideas.md").read_text() == "more boats"
    assert load_character_folder(folder).description == "New." and not (folder / "lorebook.toml").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mika"]


def test_a_failed_save_leaves_the_old_folder_as_it_was(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "mika"
    save_character_folder(full_character(), folder)
    before = {p.name: p.read_bytes() for p in folder.iterdir()}

    def fail(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", fail)
    changed = full_character()
    changed.name = "Changed"
    with pytest.raises(OSError):
        save_character_folder(changed, folder)
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mika"]


def test_a_hand_written_folder_with_only_a_name_is_enough(tmp_path: Path) -> None:
    character = load_character_folder(write(tmp_path / "bo", 'name = "Bo"\n'))
    assert (character.id, character.name, character.description, character.character_book) == ("bo", "Bo", "", None)


@pytest.mark.parametrize(
    ("toml", "lorebook", "problem"),
    [
        (None, None, "character.toml does not exist"),
        ('name = "Bo\n', None, "is not valid TOML"),
        ('description = "no name"\n', None, "has no name"),
        ('name = "   "\n', None, "has no name"),
        ("name = 5\n", None, "'name' must be text"),
        ('name = "Bo"\ntags = "one"\n', None, "'tags' must be a list of texts"),
        ('name = "Bo"\nalternate_greetings = [1]\n', None, "'alternate_greetings' must be a list of texts"),
        ('name = "Bo"\n', "entries = 3\n", "'entries' must be a list"),
        ('name = "Bo"\n', '[[entries]]\nkeys = "x"\ncontent = "c"\n', "entry 1: 'keys' must be a list"),
        ('name = "Bo"\n', '[[entries]]\nkeys = ["x"]\ncontent = "c"\nconstant = "yes"\n', "entry 1: 'constant' must be true or false"),
        ('name = "Bo"\n', '[[entries]]\nkeys = ["x"]\ncontent = "c"\npriority = 1.5\n', "entry 1: 'priority' must be a whole number"),
        ('name = "Bo"\n', 'scan_depth = "4"\n', "'scan_depth' must be a whole number"),
    ],
)
def test_broken_folders_name_the_file_and_the_problem(tmp_path: Path, toml: str | None, lorebook: str | None, problem: str) -> None:
    folder = tmp_path / "bo"
    folder.mkdir()
    if toml is not None:
        write(folder, toml, lorebook)
    with pytest.raises(CharacterError) as info:
        load_character_folder(folder)
    assert problem in info.value.message and str(folder) in info.value.message and info.value.hint


def test_a_toml_syntax_error_says_which_line(tmp_path: Path) -> None:
    write(tmp_path / "bo", 'name = "Bo"\n\ndescription = \'\'\'\nfine\n\'\'\'\npersonality = oops\n')
    with pytest.raises(CharacterError, match=r"line 6"):
        load_character_folder(tmp_path / "bo")


TRICKY = [
    "plain", "", "with 'single' and \"double\" quotes", "ends with a quote'", "'''", "a '''triple''' inside",
    '"""', 'a """triple""" inside', "back\\slash\\", "C:\\new\\table", "tab\there", "bell\x07", "del\x7f",
    "line\nbreaks\n\nand blank lines", "\nleading newline", "trailing newline\n", "crlf\r\nline", "lone\rcr",
    "unicode: 猫 café 🌊", "x" * 200, "'''\n\"\"\"\n\\\n",
]


@pytest.mark.parametrize("text", TRICKY)
def test_the_toml_writer_reads_back_exactly(text: str) -> None:
    parsed = tomllib.loads(tomlwrite.assignment("v", text) + "\n" + tomlwrite.assignment("items", [text, "x"]))
    # Multi-line text gains one trailing newline (its closing quotes' line), which loaders strip.
    assert parsed["v"] in (text, text + "\n")
    assert parsed["items"][0] in (text, text + "\n") and parsed["items"][1] == "x"


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(exclude_categories=("Cs",))))
def test_the_toml_writer_handles_any_text(text: str) -> None:
    assert tomllib.loads(tomlwrite.assignment("v", text))["v"] in (text, text + "\n")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.text(alphabet=st.characters(exclude_categories=("Cs",)), max_size=40), min_size=4, max_size=4))
def test_any_field_text_survives_a_save_and_load(tmp_path: Path, texts: list[str]) -> None:
    character = Character(id="fuzz", name=texts[0].strip() or "Fuzz", description=texts[1], first_message=texts[2],
                          alternate_greetings=[texts[3]],
                          character_book=Lorebook([LoreEntry(keys=[texts[3]], content=texts[1])]))
    save_character_folder(character, tmp_path / "fuzz")
    loaded = load_character_folder(tmp_path / "fuzz")
    assert (loaded.name, loaded.description, loaded.first_message, loaded.alternate_greetings) == (
        tidy(character.name), tidy(texts[1]), tidy(texts[2]), [tidy(texts[3])])
    assert loaded.character_book.entries[0].keys == [tidy(texts[3])]


# -- the library -------------------------------------------------------------------------------


def test_the_shipped_characters_are_listed() -> None:
    listing = scan_characters()
    assert [c.id for c in listing.characters] == SHIPPED and listing.problems == []
    assert all(c.bundled and source_kind(c) == "bundled" for c in listing.characters)


def test_a_user_folder_overrides_a_bundled_one_with_the_same_id() -> None:
    write(locations.user_characters_dir() / "wren", 'name = "Wren"\ndescription = "My own Wren."\n')
    wren = find_character("wren")
    assert wren.description == "My own Wren." and not wren.bundled and source_kind(wren) == "user"
    assert [c.id for c in list_characters()] == SHIPPED


def test_broken_folders_are_skipped_and_reported_not_fatal() -> None:
    user = locations.user_characters_dir()
    write(user / "broken", "name = \n")
    (user / "empty").mkdir()
    write(user / "wren", "name = 3\n")  # a broken override leaves the shipped Wren in place
    write(user / ".staging-tmp", "name = \n")  # hidden folders are omoide's own work in progress
    listing = scan_characters()
    assert [c.id for c in listing.characters] == SHIPPED and listing.characters[1].bundled
    messages = sorted(p.message for p in listing.problems)
    assert len(messages) == 3
    assert any("broken" in m and "not valid TOML" in m for m in messages)
    assert any("empty has no character.toml" in m for m in messages)
    assert any("'name' must be text" in m for m in messages)


@pytest.mark.parametrize("query", ["suzune", "SUZUNE", " Suzune ", "suzune"])
def test_characters_are_found_by_id_or_name_in_any_case(query: str) -> None:
    assert find_character(query).id == "suzune"


def test_characters_are_found_by_nickname_too() -> None:
    write(locations.user_characters_dir() / "selene", 'name = "Selene Marchetti"\nnickname = "Sel"\n')
    assert find_character("sel").id == "selene" and find_character("selene marchetti").id == "selene"


def test_an_unknown_name_lists_the_characters_and_suggests_the_nearest() -> None:
    with pytest.raises(CharacterError) as info:
        find_character("suzne")
    assert info.value.message == "There is no character called 'suzne'."
    assert "Did you mean 'suzune'?" in info.value.hint and "suzune, wren" in info.value.hint
    with pytest.raises(CharacterError) as far:
        find_character("zzzzzz")
    assert "Did you mean" not in far.value.hint


def test_the_default_character_is_suzune() -> None:
    assert default_character().id == "suzune"


def test_with_no_characters_at_all_the_error_says_how_to_add_one(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(locations, "bundled_characters_dir", lambda: tmp_path / "none")
    with pytest.raises(CharacterError) as info:
        default_character()
    assert "omoide characters import" in info.value.hint
    assert list_characters() == []


# -- the shipped characters ---------------------------------------------------------------------


@pytest.mark.parametrize("character_id", SHIPPED)
def test_shipped_characters_are_complete_and_their_macros_substitute(character_id: str) -> None:
    c = find_character(character_id)
    assert c.id == c.id.lower() and c.id.isascii() and c.name.isascii()
    for field in ("description", "personality", "scenario", "first_message", "example_dialogue"):
        value = getattr(c, field)
        assert value, field
        done = substitute(value, char=c.display_name, user="Kai")
        assert "{{" not in done and "<USER>" not in done and "<BOT>" not in done
    assert "{{char}}" in c.description and "{{user}}" in c.scenario + c.first_message
    assert "Kai" in substitute(c.example_dialogue, char=c.display_name, user="Kai")
    assert "*" in c.example_dialogue and "*" in c.first_message  # *actions* roleplay style
    assert c.alternate_greetings and c.tags and c.creator


def test_suzunes_lorebook_fires_on_what_the_chat_mentions() -> None:
    suzune = find_character("suzune")
    book = suzune.character_book
    assert book is not None and [e.name for e in book.entries] == ["The café", "The station", "The cat", "The blue mug"]
    result = scan(book, ["Is that your cat on the windowsill?", "Which mug is that?"])
    assert [f.entry.name for f in result] == ["The cat"]
    result = scan(book, ["The last train left.", "Why the chipped blue mug?"])
    assert [f.entry.name for f in result] == ["The station", "The blue mug"]
    assert [f.entry.name for f in scan(book, ["黒猫"])] == ["The cat"]


def test_wren_has_no_lorebook() -> None:
    assert find_character("wren").character_book is None
