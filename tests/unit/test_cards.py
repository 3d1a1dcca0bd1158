"""Character Card V1/V2/V3 in JSON and PNG: import, use, export, round trip,
and every way a card file can be broken."""

from __future__ import annotations

import base64
import json
import struct
import zlib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from omoide import locations
from omoide.characters import folder as folder_module
from omoide.characters.cards import (
    card_from_png,
    character_from_card,
    export_card,
    export_card_json,
    export_card_png,
    import_card,
    load_character,
)
from omoide.characters.library import find_character, scan_characters
from omoide.characters.png import blank_png, read_chunks, text_chunks
from omoide.errors import CharacterError

CARDS = Path(__file__).parents[1] / "data" / "cards"
SAMPLES = ["v1_hana.json", "v2_orin.json", "v2_quirks.json", "v3_sel.json"]


def original(name: str) -> dict:
    return json.loads((CARDS / name).read_text(encoding="utf-8"))


def b64(card: object) -> bytes:
    return base64.b64encode(json.dumps(card, ensure_ascii=False).encode("utf-8"))


# A PNG assembled by hand, independently of omoide's own PNG writer.
def chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def hand_png(*extra: bytes) -> bytes:
    header = chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0))
    return b"\x89PNG\r\n\x1a\n" + header + chunk(b"IDAT", zlib.compress(b"\x00\x80")) + b"".join(extra) + chunk(b"IEND", b"")


def tEXt(keyword: str, value: bytes) -> bytes:
    return chunk(b"tEXt", keyword.encode() + b"\x00" + value)


def zTXt(keyword: str, value: bytes) -> bytes:
    return chunk(b"zTXt", keyword.encode() + b"\x00\x00" + zlib.compress(value))


def iTXt(keyword: str, value: bytes, *, compressed: bool) -> bytes:
    body = zlib.compress(value) if compressed else value
    return chunk(b"iTXt", keyword.encode() + b"\x00" + bytes([int(compressed), 0]) + b"en\x00\x00" + body)


def keyword_for(card: dict) -> str:
    return "ccv3" if card.get("spec") == "chara_card_v3" else "chara"


def decode(png: bytes) -> dict[str, dict]:
    return {k: json.loads(base64.b64decode(v)) for k, v in text_chunks(read_chunks(png)).items() if k in ("ccv3", "chara")}


# -- round trips ----------------------------------------------------------------------


@pytest.mark.parametrize("name", SAMPLES)
def test_a_json_card_imported_and_exported_gives_back_every_field(name: str, tmp_path: Path) -> None:
    character = import_card(CARDS / name, tmp_path)
    reloaded = load_character(tmp_path / character.id)
    assert json.loads(export_card_json(reloaded)) == original(name)


def test_a_broken_kept_card_is_named_and_the_library_lists_the_character_as_a_problem() -> None:
    library = locations.user_characters_dir()
    character = import_card(CARDS / "v2_orin.json", library)
    (library / character.id / "card.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(CharacterError) as caught:
        load_character(library / character.id)
    assert "card.json is not a readable card" in caught.value.message and "Delete it" in caught.value.hint
    listing = scan_characters()
    assert character.id not in [c.id for c in listing.characters]
    assert any("card.json is not a readable card" in problem.message for problem in listing.problems)


@pytest.mark.parametrize("name", SAMPLES)
@pytest.mark.parametrize("container", ["tEXt", "zTXt", "iTXt", "iTXt-compressed"])
def test_a_hand_made_png_card_round_trips_through_the_library(name: str, container: str, tmp_path: Path) -> None:
    card = original(name)
    payload = b64(card)
    text_chunk = {
        "tEXt": lambda: tEXt(keyword_for(card), payload),
        "zTXt": lambda: zTXt(keyword_for(card), payload),
        "iTXt": lambda: iTXt(keyword_for(card), payload, compressed=False),
        "iTXt-compressed": lambda: iTXt(keyword_for(card), payload, compressed=True),
    }[container]()
    source = tmp_path / "card.png"
    source.write_bytes(hand_png(text_chunk))
    character = import_card(source, tmp_path / "library")
    folder = tmp_path / "library" / character.id
    assert (folder / "card.png").read_bytes() == source.read_bytes()

    exported = export_card_png(load_character(folder), (folder / "card.png").read_bytes())
    cards = decode(exported)
    assert cards["chara"]["spec"] == "chara_card_v2" and cards["ccv3"]["spec"] == "chara_card_v3"
    if card.get("spec") in ("chara_card_v2", "chara_card_v3"):
        assert cards[keyword_for(card)] == card
    else:
        assert {k: cards["chara"]["data"][k] for k in card} == card
    # The image itself is untouched (the same header and pixel data, byte for byte) and each card chunk appears once.
    kinds = [c.kind for c in read_chunks(exported)]
    assert kinds[:2] == [b"IHDR", b"IDAT"] and kinds[-1] == b"IEND" and len(kinds) == 5
    assert image_chunks(exported) == image_chunks(source.read_bytes())


def image_chunks(png: bytes) -> list[tuple[bytes, bytes]]:
    """What makes the picture: its header, palette and pixel data, byte for byte."""
    return [(c.kind, c.data) for c in read_chunks(png) if c.kind in (b"IHDR", b"PLTE", b"IDAT", b"IEND")]


@pytest.mark.parametrize("name", SAMPLES)
def test_a_card_exported_as_png_reads_back_as_the_same_character(name: str, tmp_path: Path) -> None:
    first = character_from_card(original(name))
    png = tmp_path / "out.png"
    png.write_bytes(export_card_png(first))
    again = import_card(png, tmp_path / "library")
    for field in ("name", "description", "personality", "first_message", "example_dialogue", "alternate_greetings",
                  "nickname", "tags", "extensions", "character_book"):
        assert getattr(again, field) == getattr(first, field), field


def test_v2_and_v3_of_the_same_card_keep_their_unknown_fields_across_versions() -> None:
    orin = character_from_card(original("v2_orin.json"))
    v3 = export_card(orin, "chara_card_v3")
    assert v3["x_unknown_top_level"] == {"kept": [1, 2, 3]}
    assert v3["data"]["extensions"] == original("v2_orin.json")["data"]["extensions"]
    assert v3["data"]["group_only_greetings"] == []
    sel = character_from_card(original("v3_sel.json"))
    v2 = export_card(sel, "chara_card_v2")["data"]
    assert "nickname" not in v2 and "group_only_greetings" not in v2
    assert v2["character_book"]["entries"][0]["keys"] == ["/fog(horn)?/i"]


def test_ccv3_is_preferred_over_chara_and_chara_is_the_fallback() -> None:
    v2 = {"spec": "chara_card_v2", "spec_version": "2.0", "data": {"name": "Old"}}
    v3 = {"spec": "chara_card_v3", "spec_version": "3.0", "data": {"name": "New"}}
    assert card_from_png(hand_png(tEXt("chara", b64(v2)), tEXt("ccv3", b64(v3))))["data"]["name"] == "New"
    assert card_from_png(hand_png(tEXt("ccv3", b"%%%"), tEXt("chara", b64(v2))))["data"]["name"] == "Old"


def test_exporting_over_an_old_card_replaces_its_chunks() -> None:
    stale = {"spec": "chara_card_v2", "data": {"name": "Stale"}}
    base = hand_png(tEXt("chara", b64(stale)), tEXt("ccv3", b64(stale)), tEXt("Comment", b"made by hand"))
    exported = export_card_png(character_from_card(original("v3_sel.json")), base)
    texts = text_chunks(read_chunks(exported))
    assert texts["Comment"] == "made by hand"
    assert decode(exported)["ccv3"] == original("v3_sel.json")
    assert decode(exported)["chara"]["data"]["name"] == "Selene Marchetti"
    assert sum(c.kind == b"tEXt" for c in read_chunks(exported)) == 3


def test_an_edited_imported_character_exports_the_edit_and_keeps_the_rest(tmp_path: Path) -> None:
    character = import_card(CARDS / "v2_orin.json", tmp_path)
    toml = tmp_path / character.id / "character.toml"
    toml.write_text(toml.read_text(encoding="utf-8").replace("retired clockmaker", "retired watchmaker"), encoding="utf-8")
    exported = json.loads(export_card_json(load_character(tmp_path / character.id)))
    expected = original("v2_orin.json")
    expected["data"]["description"] = expected["data"]["description"].replace("clockmaker", "watchmaker")
    assert exported == expected


def test_an_edited_lorebook_keeps_the_fields_omoide_does_not_know(tmp_path: Path) -> None:
    character = import_card(CARDS / "v2_orin.json", tmp_path)
    book = tmp_path / character.id / "lorebook.toml"
    book.write_text(book.read_text(encoding="utf-8").replace("old clocks run slow", "old clocks run fast"), encoding="utf-8")
    entries = json.loads(export_card_json(load_character(tmp_path / character.id)))["data"]["character_book"]["entries"]
    assert entries[1]["content"] == "Rain makes the old clocks run fast."
    assert entries[1]["position"] == "after_char" and entries[0]["comment"] == "core" and entries[0]["extensions"] == {"depth": 4}


def test_fields_are_used_as_the_specs_mean() -> None:
    orin = character_from_card(original("v2_orin.json"))
    assert orin.first_message.startswith("*looks up through a loupe*")
    assert orin.example_dialogue.startswith("<START>")
    assert orin.alternate_greetings == ["*winds a music box* Listen.", "Closed! ...Oh, it's you. Come in."]
    assert orin.system_prompt == "{{original}} Keep replies short."
    assert orin.post_history_instructions == "Stay gentle."
    assert orin.creator_notes.startswith("Slow-burn") and orin.character_version == "1.2" and orin.creator == "omoide tests"
    assert orin.tags == ["cozy", "crafts"] and orin.extensions["talkativeness"] == "0.4"
    book = orin.character_book
    assert book is not None and (book.name, book.scan_depth, book.token_budget) == ("Workshop", 3, 200)
    assert book.entries[0].name == "Music box" and book.entries[0].id == 1 and book.entries[0].priority == 5
    assert book.entries[1].selective and book.entries[1].secondary_keys == ["clock"]
    sel = character_from_card(original("v3_sel.json"))
    assert sel.display_name == "Sel" and sel.name == "Selene Marchetti" and sel.character_book.entries[0].use_regex
    hana = character_from_card(original("v1_hana.json"))
    assert hana.first_message == "*holds out a daisy* For you, {{user}}!" and hana.character_book is None
    quirks = character_from_card(original("v2_quirks.json"))
    assert quirks.name == "Kaede" and quirks.tags == [] and quirks.extensions == {}
    assert quirks.character_book.entries[0].insertion_order == -5 and quirks.character_book.entries[1].name == "tea note"


def test_a_new_character_exports_a_complete_v3_card_with_a_v2_copy() -> None:
    suzune = find_character("suzune")
    card = json.loads(export_card_json(suzune))
    assert card["spec"] == "chara_card_v3" and card["spec_version"] == "3.0"
    for field in ("name", "description", "personality", "scenario", "first_mes", "mes_example", "creator_notes",
                  "system_prompt", "post_history_instructions", "alternate_greetings", "tags", "creator",
                  "character_version", "extensions", "group_only_greetings"):
        assert field in card["data"], field
    assert card["data"]["first_mes"] == suzune.first_message
    assert len(card["data"]["character_book"]["entries"]) == 4
    cards = decode(export_card_png(suzune))
    assert cards["ccv3"] == card and cards["chara"]["data"]["mes_example"] == suzune.example_dialogue


def test_importing_the_same_name_twice_keeps_both(tmp_path: Path) -> None:
    first = import_card(CARDS / "v1_hana.json", tmp_path)
    second = import_card(CARDS / "v1_hana.json", tmp_path)
    assert (first.id, second.id) == ("hana", "hana-2")
    assert load_character(tmp_path / "hana-2").name == "Hana"


@pytest.mark.parametrize("name", ["../../etc/passwd", "..", "a/b\\c", "/", "Zoë Ōkami", "日本語"])
def test_names_never_place_a_character_outside_the_characters_folder(name: str, tmp_path: Path) -> None:
    path = tmp_path / "card.json"
    path.write_text(json.dumps({"name": name}), encoding="utf-8")
    library = tmp_path / "library"
    character = import_card(path, library)
    assert [p.name for p in library.iterdir()] == [character.id]
    assert character.id.replace("-", "").isalnum() and character.id == character.id.lower()
    assert load_character(library / character.id).name == name.strip()


# -- bad input ---------------------------------------------------------------------------


def _png_with(keyword: str, payload: bytes) -> bytes:
    return hand_png(tEXt(keyword, payload))


BAD_CARDS = [
    (blank_png(), "no character card"),
    (hand_png(tEXt("Comment", b"hello")), "no character card"),
    (blank_png()[:-20], "truncated"),
    (blank_png()[:30], "truncated"),
    (blank_png()[:40] + b"\x00" + blank_png()[41:], "CRC mismatch"),
    (b"\x89PNX\r\n\x1a\n" + blank_png()[8:], "bad signature"),
    (_png_with("chara", b"!!!not base64!!!"), "not valid base64"),
    (_png_with("chara", base64.b64encode(b"{nope")), "invalid JSON"),
    (_png_with("ccv3", base64.b64encode(b"\xff\xfe")), "neither a PNG nor UTF-8 JSON"),
    (_png_with("chara", base64.b64encode(b"[1]")), "not an object"),
    (b'{"spec": "chara_card_v2", "data": {"name": 7}}', "'name' must be text"),
    (b'{"spec": "chara_card_v2", "data": {"name": "A", "tags": "x"}}', "'tags' must be a list"),
    (b'{"spec": "chara_card_v3", "data": {"name": "A", "extensions": []}}', "'extensions' must be an object"),
    (b'{"name": "A", "character_book": {"entries": [{"keys": "x", "content": ""}]}}', "'keys' must be a list"),
    (b'{"name": "A", "character_book": {"entries": [{"keys": [], "content": "", "constant": "yes"}]}}', "'constant' must be true or false"),
    (b'{"name": "A", "character_book": {"entries": [{"keys": [], "content": "", "priority": "high"}]}}', "'priority' must be a whole number"),
    (b'{"name": "A", "character_book": {"entries": [{"keys": [], "content": "", "priority": 1e999}]}}', "'priority' must be a whole number"),
    (b'{"name": "A", "character_book": []}', "'character_book' must be an object"),
    (b'{"spec": "chara_card_v2"}', "'data' is missing"),
    (b"[1, 2]", "not an object"),
    (b'{"name": ""}', "no name"),
    (b'{"name": "\\ud800"}', "not valid Unicode"),
    (b'{"name": "A", "extensions": ' + b'{"a": ' * 150 + b"1" + b"}" * 150 + b"}", "nests more than"),
    (b"[" * 100_000, "nested too deeply"),
    (b"{nope", "invalid JSON at line 1, column 2"),
    (b"\xff\xfe garbage", "neither a PNG nor UTF-8 JSON"),
    (b"", "invalid JSON"),
]


@pytest.mark.parametrize(("content", "problem"), BAD_CARDS, ids=[p for _, p in BAD_CARDS])
def test_bad_cards_get_a_clear_error_and_nothing_is_written(tmp_path: Path, content: bytes, problem: str) -> None:
    path = tmp_path / "bad.card"
    path.write_bytes(content)
    library = tmp_path / "library"
    with pytest.raises(CharacterError) as info:
        import_card(path, library)
    assert problem in info.value.message and str(path) in info.value.message
    assert info.value.hint
    assert not library.exists() or not any(library.iterdir())


def test_a_png_named_file_that_is_not_a_png_says_so(tmp_path: Path) -> None:
    path = tmp_path / "card.png"
    path.write_bytes(b"GIF89a....")
    with pytest.raises(CharacterError, match="bad signature"):
        import_card(path, tmp_path / "library")


def test_an_oversized_file_is_refused_before_it_is_read(tmp_path: Path) -> None:
    path = tmp_path / "huge.png"
    with path.open("wb") as fh:
        fh.truncate(21 * 1024 * 1024)
    with pytest.raises(CharacterError, match="over the 20 MiB limit"):
        import_card(path, tmp_path / "library")


@pytest.mark.parametrize("kind", ["missing", "directory"])
def test_a_path_that_is_not_a_file_is_refused(kind: str, tmp_path: Path) -> None:
    path = tmp_path / "nothing.json"
    if kind == "directory":
        path.mkdir()
    with pytest.raises(CharacterError, match="cannot be read|it is a folder, not a file"):
        import_card(path, tmp_path / "library")


def test_a_compressed_chunk_that_inflates_enormously_stops_the_reading_and_says_so() -> None:
    bomb = zTXt("chara", b"A" * (80 * 1024 * 1024))
    with pytest.raises(CharacterError, match="'chara' text chunk inflates past 8 MiB"):
        card_from_png(hand_png(bomb))


def test_a_failure_while_saving_leaves_nothing_behind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: object, **kwargs: object) -> str:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(folder_module, "lorebook_toml", broken)
    library = tmp_path / "library"
    with pytest.raises(CharacterError, match="No space left on device"):
        import_card(CARDS / "v2_orin.json", library)
    assert list(library.iterdir()) == []


def test_exporting_over_a_broken_image_is_a_character_error() -> None:
    with pytest.raises(CharacterError, match="CRC mismatch"):
        export_card_png(character_from_card(original("v1_hana.json")), blank_png()[:40] + b"\x00" + blank_png()[41:])


# -- nothing but CharacterError, whatever the input -----------------------------------------

FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@FUZZ
@given(st.binary(max_size=400), st.sampled_from(["x.json", "x.png", "x.card"]))
def test_random_bytes_only_ever_raise_a_character_error(tmp_path: Path, data: bytes, filename: str) -> None:
    path = tmp_path / filename
    path.write_bytes(data)
    try:
        import_card(path, tmp_path / "library")
    except CharacterError:
        pass


_SAMPLE_PNG = export_card_png(character_from_card(original("v2_orin.json")))


@FUZZ
@given(st.lists(st.tuples(st.integers(min_value=0), st.integers(min_value=0, max_value=255)), min_size=1, max_size=4),
       st.one_of(st.none(), st.integers(min_value=0)))
def test_a_mutated_card_png_only_ever_raises_a_character_error(changes: list[tuple[int, int]], cut: int | None) -> None:
    png = bytearray(_SAMPLE_PNG)
    for position, value in changes:
        png[position % len(png)] = value
    if cut is not None:
        png = png[: cut % len(png)]
    try:
        card_from_png(bytes(png))
    except CharacterError:
        pass


@FUZZ
@given(st.binary(max_size=200))
def test_a_valid_png_whose_card_chunk_is_garbage_only_raises_a_character_error(payload: bytes) -> None:
    for keyword in ("chara", "ccv3"):
        for made in (tEXt(keyword, payload), zTXt(keyword, payload), iTXt(keyword, payload, compressed=False)):
            try:
                card_from_png(hand_png(made))
            except CharacterError:
                pass


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=16,
)
FIELDS = st.sampled_from(["name", "description", "tags", "alternate_greetings", "extensions", "character_book",
                          "first_mes", "nickname", "data", "spec"])


@FUZZ
@given(JSON, st.dictionaries(FIELDS, JSON, max_size=4), st.lists(st.dictionaries(st.sampled_from(
    ["keys", "content", "selective", "priority", "insertion_order", "id", "extensions", "enabled", "secondary_keys"]), JSON, max_size=5), max_size=3))
def test_any_json_only_ever_raises_a_character_error(value, fields, entries) -> None:  # type: ignore[no-untyped-def]
    candidates = [
        value,
        {"spec": "chara_card_v2", "data": value},
        {"spec": "chara_card_v3", "data": {"name": "X", **fields}},
        {"name": "X", **fields},
        {"name": "X", "character_book": {"entries": entries}},
    ]
    for card in candidates:
        if not isinstance(card, dict):
            continue
        try:
            character = character_from_card(card)
        except CharacterError:
            continue
        # Whatever was accepted can be exported again.
        export_card_json(character)
        export_card_png(character)


TEXT = st.text(alphabet=st.characters(exclude_categories=("Cs",)), max_size=30)
JSON_EQ = st.recursive(  # JSON without NaN, which never equals itself
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=10,
)
ENTRY = st.fixed_dictionaries(
    {"keys": st.lists(TEXT, max_size=3), "content": TEXT},
    optional={"secondary_keys": st.lists(TEXT, max_size=2), "selective": st.booleans(), "constant": st.booleans(),
              "enabled": st.booleans(), "insertion_order": st.integers(-1000, 1000), "priority": st.integers(-5, 50),
              "case_sensitive": st.none() | st.booleans(), "use_regex": st.booleans(), "name": TEXT, "comment": TEXT,
              "id": st.integers(0, 99), "extensions": st.dictionaries(TEXT, JSON_EQ, max_size=2), "position": TEXT},
)
CARD_DATA = st.fixed_dictionaries(
    {"name": TEXT.filter(lambda s: s.strip())},
    optional={**{k: TEXT for k in ("description", "personality", "scenario", "first_mes", "mes_example", "creator_notes",
                                   "system_prompt", "post_history_instructions", "creator", "character_version", "nickname")},
              "alternate_greetings": st.lists(TEXT, max_size=3), "tags": st.none() | st.lists(TEXT, max_size=3),
              "extensions": st.dictionaries(TEXT, JSON_EQ, max_size=3), "x_unknown": JSON_EQ,
              "character_book": st.fixed_dictionaries({"entries": st.lists(ENTRY, max_size=3)},
                                                       optional={"name": TEXT, "scan_depth": st.integers(0, 20), "x_book": JSON_EQ})},
)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(CARD_DATA, st.sampled_from(["chara_card_v2", "chara_card_v3", None]))
def test_any_card_survives_import_and_export_unchanged(tmp_path_factory: pytest.TempPathFactory, data: dict, spec: str | None) -> None:
    card = {"spec": spec, "spec_version": "x", "data": data} if spec else data
    path = tmp_path_factory.mktemp("card") / "card.json"
    path.write_text(json.dumps(card, ensure_ascii=False), encoding="utf-8")
    character = import_card(path, path.parent / "library")
    assert json.loads(export_card_json(load_character(path.parent / "library" / character.id))) == card
