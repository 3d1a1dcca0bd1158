"""Character Card V1/V2/V3 in JSON and PNG: import, use, export, round trip."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from omoide.characters.cards import (
    card_from_png,
    character_from_card,
    export_card,
    export_card_json,
    export_card_png,
    import_card,
)
from omoide.characters.folder import load_character_folder
from omoide.characters.png import Chunk, blank_png, read_chunks, replace_text_chunks, text_chunks, write_chunks
from omoide.errors import CharacterError

CARDS = Path(__file__).parents[1] / "data" / "cards"
SAMPLES = ["v1_hana.json", "v2_orin.json", "v3_sel.json"]


def original(name: str) -> dict:
    return json.loads((CARDS / name).read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", SAMPLES)
def test_a_json_card_imported_and_exported_keeps_every_field(name: str, tmp_path: Path) -> None:
    character = import_card(CARDS / name, tmp_path)
    reloaded = load_character_folder(tmp_path / character.id)
    assert json.loads(export_card_json(reloaded)) == original(name)


@pytest.mark.parametrize("name", ["v2_orin.json", "v3_sel.json"])
def test_a_png_card_round_trips_with_both_chunks(name: str, tmp_path: Path) -> None:
    card = original(name)
    png = write_chunks(replace_text_chunks(read_chunks(blank_png()), {
        "ccv3" if card["spec"] == "chara_card_v3" else "chara": base64.b64encode(json.dumps(card).encode()).decode(),
    }))
    source = tmp_path / "card.png"
    source.write_bytes(png)
    character = import_card(source, tmp_path / "library")
    folder = tmp_path / "library" / character.id
    assert (folder / "card.png").read_bytes() == png
    exported = export_card_png(load_character_folder(folder), (folder / "card.png").read_bytes())
    texts = text_chunks(read_chunks(exported))
    v3 = json.loads(base64.b64decode(texts["ccv3"]))
    v2 = json.loads(base64.b64decode(texts["chara"]))
    assert v2["spec"] == "chara_card_v2" and v3["spec"] == "chara_card_v3"
    assert (v2 if card["spec"] == "chara_card_v2" else v3) == card
    assert [c.kind for c in read_chunks(exported)][:2] == [b"IHDR", b"IDAT"]


def test_ccv3_is_preferred_over_chara() -> None:
    v2 = {"spec": "chara_card_v2", "spec_version": "2.0", "data": {"name": "Old"}}
    v3 = {"spec": "chara_card_v3", "spec_version": "3.0", "data": {"name": "New"}}
    enc = lambda c: base64.b64encode(json.dumps(c).encode()).decode()  # noqa: E731
    png = write_chunks(replace_text_chunks(read_chunks(blank_png()), {"chara": enc(v2), "ccv3": enc(v3)}))
    assert card_from_png(png)["data"]["name"] == "New"


def test_fields_are_used_as_the_specs_mean() -> None:
    orin = character_from_card(original("v2_orin.json"))
    assert orin.first_message.startswith("*looks up through a loupe*")
    assert orin.example_dialogue.startswith("<START>")
    assert orin.alternate_greetings == ["*winds a music box* Listen.", "Closed! ...Oh, it's you. Come in."]
    assert orin.system_prompt == "{{original}} Keep replies short."
    assert orin.character_book is not None and orin.character_book.scan_depth == 3
    assert orin.character_book.entries[1].selective and orin.character_book.entries[1].secondary_keys == ["clock"]
    sel = character_from_card(original("v3_sel.json"))
    assert sel.display_name == "Sel" and sel.character_book.entries[0].use_regex


def test_a_new_characters_card_is_v3_with_a_v2_fallback(tmp_path: Path) -> None:
    from omoide.characters.library import find_character

    suzune = find_character("suzune")
    png = export_card_png(suzune)
    texts = text_chunks(read_chunks(png))
    v3 = json.loads(base64.b64decode(texts["ccv3"]))
    assert v3["data"]["name"] == "Suzune" and v3["data"]["first_mes"] == suzune.first_message
    assert len(v3["data"]["character_book"]["entries"]) == 3
    assert export_card(suzune, "chara_card_v2")["data"]["mes_example"] == suzune.example_dialogue


def _png_with(keyword: str, payload: str) -> bytes:
    return write_chunks(replace_text_chunks(read_chunks(blank_png()), {keyword: payload}))


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (blank_png(), "no character card"),
        (blank_png()[:-20], "truncated"),
        (blank_png()[:40] + b"\x00" + blank_png()[41:], "CRC mismatch"),
        (_png_with("chara", "!!!not base64!!!"), "not valid base64"),
        (_png_with("chara", base64.b64encode(b"{nope").decode()), "not hold valid JSON"),
        (b"{\"spec\": \"chara_card_v2\", \"data\": {\"name\": 7}}", "'name' must be text"),
        (b"{\"spec\": \"chara_card_v2\", \"data\": {\"name\": \"A\", \"tags\": \"x\"}}", "'tags' must be a list"),
        (b"{\"spec\": \"chara_card_v2\"}", "'data' is missing"),
        (b"[1, 2]", "not an object"),
        (b"{\"name\": \"\"}", "no name"),
        (b"\xff\xfe garbage", "neither a PNG nor UTF-8 JSON"),
    ],
)
def test_bad_cards_get_a_clear_error_and_nothing_is_written(tmp_path: Path, content: bytes, problem: str) -> None:
    path = tmp_path / "bad.card"
    path.write_bytes(content)
    library = tmp_path / "library"
    with pytest.raises(CharacterError) as info:
        import_card(path, library)
    assert problem in info.value.message and str(path) in info.value.message
    assert not library.exists() or not any(library.iterdir())


def test_an_oversized_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "huge.png"
    with path.open("wb") as fh:
        fh.truncate(21 * 1024 * 1024)
    with pytest.raises(CharacterError, match="over the 20 MiB limit"):
        import_card(path, tmp_path / "library")


def test_names_cannot_escape_the_characters_folder(tmp_path: Path) -> None:
    path = tmp_path / "evil.json"
    path.write_text(json.dumps({"name": "../../etc/passwd"}))
    character = import_card(path, tmp_path / "library")
    assert (tmp_path / "library" / character.id).is_dir() and "/" not in character.id and ".." not in character.id


def test_importing_the_same_name_twice_keeps_both(tmp_path: Path) -> None:
    first = import_card(CARDS / "v1_hana.json", tmp_path)
    second = import_card(CARDS / "v1_hana.json", tmp_path)
    assert (first.id, second.id) == ("hana", "hana-2")


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=300))
def test_random_bytes_only_ever_raise_a_character_error(tmp_path_factory, data: bytes) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path_factory.mktemp("fuzz") / "x.card"
    path.write_bytes(data)
    try:
        import_card(path, path.parent / "library")
    except CharacterError:
        pass


@settings(max_examples=150, deadline=None)
@given(st.integers(min_value=8, max_value=400), st.integers(min_value=0, max_value=255))
def test_a_mutated_card_png_only_ever_raises_a_character_error(position: int, value: int) -> None:
    png = bytearray(export_card_png(character_from_card(original("v2_orin.json"))))
    png[position % len(png)] = value
    try:
        card_from_png(bytes(png))
    except CharacterError:
        pass


@settings(max_examples=150, deadline=None)
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=12))
def test_any_json_only_ever_raises_a_character_error(value) -> None:  # type: ignore[no-untyped-def]
    for card in (value, {"spec": "chara_card_v2", "data": value}, {"name": "X", "character_book": value}):
        if not isinstance(card, dict):
            continue
        try:
            character_from_card(card)
        except CharacterError:
            pass
