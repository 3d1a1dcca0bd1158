"""Character Card V1, V2 (`chara_card_v2`) and V3 (`chara_card_v3`), as JSON
or inside a PNG (`ccv3` and `chara` text chunks holding base64 JSON).

An imported card is kept verbatim beside the character (`card.json`), and an
export starts from it, overlaying only the fields the user edited, so unknown
fields and `extensions` come back exactly as they went in.
"""

from __future__ import annotations

import base64
import binascii
import copy
import json
import re
import unicodedata
from pathlib import Path
from typing import Any

from omoide import locations
from omoide.characters.books import lorebook_from_card, lorebook_to_card, mapping, text, texts
from omoide.characters.folder import load_character_folder, read_kept_card, save_character_folder, tidy
from omoide.characters.model import Character, Lorebook
from omoide.characters.png import PNGError, blank_png, read_chunks, replace_text_chunks, text_chunks, write_chunks
from omoide.errors import CharacterError
from omoide.safe_text import json_text

MAX_CARD_BYTES = 20 * 1024 * 1024
MAX_DEPTH = 100
"""Deeper JSON is refused: no real card nests like that, and copying it would overflow the stack."""
V2, V3 = "chara_card_v2", "chara_card_v3"

# card field -> Character attribute
TEXT_FIELDS = {
    "name": "name", "description": "description", "personality": "personality", "scenario": "scenario",
    "first_mes": "first_message", "mes_example": "example_dialogue", "creator_notes": "creator_notes",
    "system_prompt": "system_prompt", "post_history_instructions": "post_history_instructions",
    "creator": "creator", "character_version": "character_version", "nickname": "nickname",
}
LIST_FIELDS = ("alternate_greetings", "tags")
V3_ONLY = ("nickname", "group_only_greetings", "creator_notes_multilingual", "source", "creation_date", "modification_date", "assets")
_EMPTY: tuple[Any, ...] = (None, "", [], {})


def _bad(path: Path | str, problem: str, hint: str = "Check that it is a character card (V1, V2 or V3, as JSON or PNG).") -> CharacterError:
    return CharacterError(f"Cannot read the card {path}: {problem}.", hint)


# -- reading ------------------------------------------------------------------------


def read_card_file(path: Path) -> tuple[dict[str, Any], bytes | None]:
    """The card's JSON object, and the file's bytes when it is a PNG."""
    try:
        data = locations.read_regular(path, MAX_CARD_BYTES)
    except locations.NotAFile as exc:
        raise _bad(path, str(exc.strerror), "Only regular .png and .json files are cards.") from exc
    except locations.FileTooLarge as exc:
        raise _bad(path, str(exc.strerror), "Cards are a few hundred KiB at most; is this the right file?") from exc
    except OSError as exc:
        raise _bad(path, f"the file cannot be read ({exc.strerror or exc})", "Check the path and its permissions.") from exc
    looks_like_png = data.startswith(b"\x89P") or data[12:16] == b"IHDR"  # a damaged signature is still a PNG
    if looks_like_png or path.suffix.lower() == ".png":
        return card_from_png(data, path), data
    return _parse_json(data, path, "the file"), None


def _parse_json(raw: bytes, path: Path | str, what: str) -> dict[str, Any]:
    try:
        card = json.loads(raw.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise _bad(path, f"{what} is neither a PNG nor UTF-8 JSON") from exc
    except json.JSONDecodeError as exc:
        raise _bad(path, f"{what} holds invalid JSON at line {exc.lineno}, column {exc.colno} ({exc.msg})") from exc
    except RecursionError as exc:
        raise _bad(path, f"{what} holds JSON nested too deeply") from exc
    if not isinstance(card, dict):
        raise _bad(path, f"{what} holds JSON that is not an object")
    return card


def _decode_chunk(value: str, keyword: str, path: Path | str) -> dict[str, Any]:
    compact = "".join(value.split())
    try:
        raw = base64.b64decode(compact + "=" * (-len(compact) % 4), validate=True)
    except (binascii.Error, ValueError) as exc:
        raise _bad(path, f"the '{keyword}' chunk is not valid base64") from exc
    return _parse_json(raw, path, f"the '{keyword}' chunk")


def card_from_png(data: bytes, path: Path | str = "<png>") -> dict[str, Any]:
    """The card inside a PNG: `ccv3` (V3) when present and readable, else `chara`."""
    try:
        found = text_chunks(read_chunks(data))
    except PNGError as exc:
        raise _bad(path, str(exc)) from exc
    keywords = [k for k in ("ccv3", "chara") if k in found]
    if not keywords:
        raise _bad(path, "the PNG holds no character card (no 'ccv3' or 'chara' text chunk)",
                   "It looks like a plain image; export the card again from where you got it.")
    errors: list[CharacterError] = []
    for keyword in keywords:
        try:
            return _decode_chunk(found[keyword], keyword, path)
        except CharacterError as exc:
            errors.append(exc)
    raise errors[0]


def spec_of(card: dict[str, Any]) -> str:
    """V2, V3, or "v1" for the original flat layout."""
    spec = card.get("spec")
    return spec if spec in (V2, V3) else "v1"


def card_data(card: dict[str, Any]) -> dict[str, Any]:
    """Where the card's fields are: `data` in V2 and V3, the top level in V1."""
    if spec_of(card) == "v1":
        return card
    data = card.get("data")
    if not isinstance(data, dict):
        raise ValueError(f"'data' is missing or not an object in a {card['spec']} card")
    return data


def _depth_ok(value: Any) -> bool:
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_DEPTH:
            return False
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item)
    return True


def _encodable(value: Any) -> bool:
    """False when some text holds a lone surrogate, which no UTF-8 file can store."""
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except (UnicodeEncodeError, ValueError, TypeError):
        return False
    return True


def character_from_card(card: dict[str, Any], *, path: Path | str = "<card>", character_id: str = "") -> Character:
    """The Character a card describes; the card itself is kept in raw_card."""
    if not _depth_ok(card):
        raise _bad(path, f"it nests more than {MAX_DEPTH} levels deep")
    if not _encodable(card):
        raise _bad(path, "it holds text that is not valid Unicode (a lone surrogate)")
    try:
        data = card_data(card)
        name = text(data, "name").strip()
        if not name:
            raise ValueError("it has no name")
        character = Character(id=character_id or slugify(name), name=name)
        for key, attr in TEXT_FIELDS.items():
            setattr(character, attr, text(data, key))
        character.name = name
        for key in LIST_FIELDS:
            setattr(character, key, texts(data, key))
        character.extensions = mapping(data, "extensions")
        character.character_book = lorebook_from_card(data.get("character_book"))
    except (ValueError, TypeError) as exc:
        raise _bad(path, str(exc)) from exc
    character.raw_card = copy.deepcopy(card)
    return character


# -- writing ------------------------------------------------------------------------


def card_fields(character: Character, original_book: Any = None) -> dict[str, Any]:
    """Every standard field (V3's set) with the character's current values."""
    data: dict[str, Any] = {key: getattr(character, attr) for key, attr in TEXT_FIELDS.items()}
    data["alternate_greetings"] = list(character.alternate_greetings)
    data["tags"] = list(character.tags)
    data["extensions"] = copy.deepcopy(character.extensions)
    book = character.character_book
    if book is None:
        data["character_book"] = None
    elif original_book is not None and _same_book(book, original_book):
        data["character_book"] = copy.deepcopy(original_book)
    else:
        data["character_book"] = lorebook_to_card(book, original_book)
    return data


def _same_book(book: Any, original: Any) -> bool:
    try:
        return bool(lorebook_from_card(original) == book)
    except (ValueError, TypeError):
        return False


def _same(old: Any, new: Any) -> bool:
    if old == new:
        return True
    if isinstance(old, str) and isinstance(new, str):
        return old.strip() == new.strip()
    return old in _EMPTY and new in _EMPTY


def _overlay(data: dict[str, Any], current: dict[str, Any]) -> None:
    """Write the current values into a card's data, touching only those that
    changed, so an unedited import exports exactly the fields it came with."""
    for key, value in current.items():
        if key not in data and value in _EMPTY:
            continue
        if key not in data or not _same(data[key], value):
            data[key] = value


def export_card(character: Character, spec: str = V3) -> dict[str, Any]:
    """The card as a JSON object in `spec` (V2 or V3): the imported card with
    the character's edits applied, or a new card with every standard field."""
    raw = character.raw_card
    original = card_data(raw) if raw is not None else {}
    current = card_fields(character, original.get("character_book"))
    if raw is not None and spec_of(raw) == spec:
        card = copy.deepcopy(raw)
        _overlay(card_data(card), current)
        return card
    data = copy.deepcopy(original)
    if raw is not None and spec_of(raw) == "v1":
        data = {k: v for k, v in data.items() if k not in ("spec", "spec_version")}
    _overlay(data, current)
    for key, value in current.items():
        data.setdefault(key, value)
    if data.get("character_book") is None:
        data.pop("character_book", None)
    if spec == V2:
        for key in V3_ONLY:
            data.pop(key, None)
        card = {"spec": V2, "spec_version": "2.0", "data": data}
    else:
        data.setdefault("group_only_greetings", [])
        if not data.get("nickname"):
            data.pop("nickname", None)
        card = {"spec": V3, "spec_version": "3.0", "data": data}
    if raw is not None and spec_of(raw) != "v1":  # fields beside `data` travel too
        card.update({k: copy.deepcopy(v) for k, v in raw.items() if k not in card})
    return card


def export_card_json(character: Character) -> bytes:
    """An imported card in its own version (V1 stays V1); a new one as V3."""
    raw = character.raw_card
    if raw is not None and spec_of(raw) == "v1":
        card = copy.deepcopy(raw)
        _overlay(card, card_fields(character, raw.get("character_book")))
    else:
        card = export_card(character, spec_of(raw) if raw is not None else V3)
    return json_text(card, indent=2).encode("utf-8")


def _chunk_text(card: dict[str, Any]) -> str:
    return base64.b64encode(json.dumps(card, ensure_ascii=False).encode("utf-8")).decode("ascii")


def export_card_png(character: Character, base_png: bytes | None = None) -> bytes:
    """A PNG holding both `ccv3` (V3, for new readers) and `chara` (V2, for old
    ones), replacing any card chunks the base image had. Without a base image,
    a small plain one is made."""
    try:
        chunks = read_chunks(base_png or blank_png())
    except PNGError as exc:
        raise CharacterError(f"Cannot use the image for {character.id}: {exc}.", "Export without it, or replace card.png.") from exc
    cards = {"chara": _chunk_text(export_card(character, V2)), "ccv3": _chunk_text(export_card(character, V3))}
    return write_chunks(replace_text_chunks(chunks, cards))


# -- the card kept in a character folder ---------------------------------------------------


def load_character(folder: Path, *, bundled: bool = False) -> Character:
    """A character folder as the library uses it: the TOML files, with the
    details only the kept `card.json` holds taken back from it."""
    character = load_character_folder(folder, bundled=bundled)
    raw_card = read_kept_card(folder)
    if raw_card is not None:
        restore_from_card(character, raw_card)
    return character


def restore_from_card(character: Character, raw_card: dict[str, Any]) -> None:
    """card.json holds what the TOML files do not (extensions, lore entry ids,
    surrounding whitespace). Take those back from it wherever the TOML still
    says the same thing, so an unedited import exports exactly as it came."""
    try:
        original = character_from_card(raw_card, character_id=character.id)
    except CharacterError:
        return  # an unreadable kept card is ignored: character.toml is what counts
    character.raw_card = raw_card
    character.extensions = original.extensions
    for attr in TEXT_FIELDS.values():  # the same attributes as character.toml's
        if tidy(getattr(original, attr)) == getattr(character, attr):
            setattr(character, attr, getattr(original, attr))
    for attr in LIST_FIELDS:
        if [tidy(s) for s in getattr(original, attr)] == getattr(character, attr):
            setattr(character, attr, getattr(original, attr))
    if original.character_book is not None and character.character_book is not None:
        if _visible(original.character_book) == _visible(character.character_book):
            character.character_book = original.character_book
        else:
            _carry_entry_details(original.character_book, character.character_book)
    elif original.character_book is not None and not original.character_book.entries:
        character.character_book = original.character_book


def _carry_entry_details(original: Lorebook, edited: Lorebook) -> None:
    """An edited lorebook keeps each entry's id and extensions, found by the
    entry's name, or by its keys when it has none."""
    by_name = {tidy(e.name): e for e in original.entries if tidy(e.name)}
    by_keys = {tuple(tidy(k) for k in e.keys): e for e in original.entries}
    for entry in edited.entries:
        match = by_name.get(entry.name) if entry.name else by_keys.get(tuple(entry.keys))
        if match is not None:
            entry.id, entry.extensions = match.id, match.extensions


def _visible(book: Lorebook) -> tuple[object, ...]:
    """What lorebook.toml holds, as the loader reads it back."""
    entries = tuple(
        (tidy(e.name), tuple(tidy(k) for k in e.keys), tidy(e.content), tuple(tidy(k) for k in e.secondary_keys),
         e.selective, e.case_sensitive, e.use_regex, e.constant, e.enabled, e.insertion_order, e.priority)
        for e in book.entries
    )
    return (tidy(book.name), book.scan_depth, book.token_budget, entries)


# -- importing into the library -------------------------------------------------------------


def slugify(name: str) -> str:
    """A lowercase id made of letters, digits and dashes, never '.' or '/'.
    Latin letters lose their accents (Élise -> elise); letters of other scripts
    stay as they are (鈴音 -> 鈴音, Алиса -> алиса), so no name becomes a bare
    `character`."""
    out: list[str] = []
    for ch in unicodedata.normalize("NFKC", name).lower():
        ascii_form = unicodedata.normalize("NFKD", ch).encode("ascii", "ignore").decode("ascii")
        if ascii_form and ascii_form.isalnum():
            out.append(ascii_form)
        elif ch.isalnum() and ch.isprintable():
            out.append(ch)
        else:
            out.append("-")
    slug = re.sub(r"-+", "-", "".join(out)).strip("-")[:48].strip("-")
    return slug or "character"


ID_PATTERN = re.compile(r"[^\W_][\w-]*")
"""What an id may be: letters (any script), digits and dashes, starting with a letter or digit."""


def _free_id(dest_dir: Path, base: str) -> str:
    candidate, n = base, 1
    while (dest_dir / candidate).exists():
        n += 1
        candidate = f"{base}-{n}"
    return candidate


def import_card(path: Path, dest_dir: Path | None = None) -> Character:
    """Read a card (JSON or PNG) and save it as a character folder in
    `dest_dir` (default: the user's characters), under a new id if the name is
    taken. Nothing is written unless the whole card reads cleanly."""
    path = Path(path)
    dest_dir = Path(dest_dir) if dest_dir is not None else locations.user_characters_dir()
    card, png = read_card_file(path)
    character = character_from_card(card, path=path)
    character.id = _free_id(dest_dir, slugify(character.name))
    folder = dest_dir / character.id
    if not ID_PATTERN.fullmatch(character.id) or folder.resolve().parent != dest_dir.resolve():
        raise _bad(path, f"its id '{character.id}' would place it outside {dest_dir}")
    try:
        save_character_folder(character, folder, extra_files={"card.png": png} if png is not None else None)
    except OSError as exc:
        raise CharacterError(f"Cannot save {character.name} to {folder}: {exc.strerror or exc}.",
                             "Check that the characters folder is writable and the disk is not full.") from exc
    character.source = folder
    return character
