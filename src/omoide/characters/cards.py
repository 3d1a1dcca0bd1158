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
import shutil
import unicodedata
from pathlib import Path
from typing import Any

from omoide import locations
from omoide.characters.folder import save_character_folder
from omoide.characters.model import Character, LoreEntry, Lorebook
from omoide.characters.png import PNGError, blank_png, read_chunks, replace_text_chunks, text_chunks, write_chunks
from omoide.errors import CharacterError

MAX_CARD_BYTES = 20 * 1024 * 1024
TEXT_FIELDS = {
    "name": "name", "description": "description", "personality": "personality", "scenario": "scenario",
    "first_mes": "first_message", "mes_example": "example_dialogue", "system_prompt": "system_prompt",
    "post_history_instructions": "post_history_instructions", "creator_notes": "creator_notes",
    "creator": "creator", "character_version": "character_version", "nickname": "nickname",
}
V2_FIELDS = (
    "name", "description", "personality", "scenario", "first_mes", "mes_example", "creator_notes", "system_prompt",
    "post_history_instructions", "alternate_greetings", "character_book", "tags", "creator", "character_version", "extensions",
)


def _bad(path: Path | str, problem: str, hint: str = "Check that it is a character card (V1, V2 or V3, JSON or PNG).") -> CharacterError:
    return CharacterError(f"Cannot read the card {path}: {problem}.", hint)


# -- reading ----------------------------------------------------------------------


def read_card_file(path: Path) -> tuple[dict[str, Any], bytes | None]:
    """The card's JSON object, and the PNG bytes when it came as an image."""
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise _bad(path, f"the file cannot be read ({exc.strerror})") from exc
    if size > MAX_CARD_BYTES:
        raise _bad(path, f"it is {size / 1_048_576:.0f} MiB, over the {MAX_CARD_BYTES // 1_048_576} MiB limit")
    data = path.read_bytes()
    if data.startswith(b"\x89PNG"):
        return card_from_png(data, path), data
    try:
        card = json.loads(data.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise _bad(path, "it is neither a PNG nor UTF-8 JSON") from exc
    except json.JSONDecodeError as exc:
        raise _bad(path, f"invalid JSON at line {exc.lineno}, column {exc.colno} ({exc.msg})") from exc
    if not isinstance(card, dict):
        raise _bad(path, "the JSON is not an object")
    return card, None


def card_from_png(data: bytes, path: Path | str = "<png>") -> dict[str, Any]:
    try:
        texts = text_chunks(read_chunks(data))
    except PNGError as exc:
        raise _bad(path, str(exc)) from exc
    keyword = "ccv3" if "ccv3" in texts else "chara" if "chara" in texts else None
    if keyword is None:
        raise _bad(path, "the PNG holds no character card (no 'ccv3' or 'chara' text chunk)", "Is it a plain image rather than a card?")
    try:
        raw = base64.b64decode(texts[keyword], validate=True)
    except (binascii.Error, ValueError) as exc:
        raise _bad(path, f"the '{keyword}' chunk is not valid base64") from exc
    try:
        card = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _bad(path, f"the '{keyword}' chunk does not hold valid JSON") from exc
    if not isinstance(card, dict):
        raise _bad(path, f"the '{keyword}' chunk does not hold a JSON object")
    return card


def card_data(card: dict[str, Any]) -> dict[str, Any]:
    """The fields, wherever the card's version keeps them."""
    if card.get("spec") in ("chara_card_v2", "chara_card_v3"):
        data = card.get("data")
        if not isinstance(data, dict):
            raise ValueError("'data' is missing or not an object")
        return data
    return card  # V1: the fields are at the top level


def _text(data: dict[str, Any], key: str) -> str:
    value = data.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ValueError(f"'{key}' must be text, not {type(value).__name__}")
    return value


def _texts(data: dict[str, Any], key: str) -> list[str]:
    value = data.get(key)
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"'{key}' must be a list of texts")
    return list(value)


def lorebook_from_card(book: Any) -> Lorebook | None:
    if book is None:
        return None
    if not isinstance(book, dict):
        raise ValueError("'character_book' must be an object")
    entries = book.get("entries", [])
    if not isinstance(entries, list):
        raise ValueError("'character_book.entries' must be a list")
    result = Lorebook(name=_text(book, "name"), extensions=dict(book.get("extensions") or {}))
    for key in ("scan_depth", "token_budget"):
        if isinstance(book.get(key), int):
            setattr(result, key, book[key])
    result.recursive_scanning = bool(book.get("recursive_scanning", False))
    for i, raw in enumerate(entries):
        if not isinstance(raw, dict):
            raise ValueError(f"lorebook entry {i} is not an object")
        result.entries.append(LoreEntry(
            keys=_texts(raw, "keys"),
            content=_text(raw, "content"),
            secondary_keys=_texts(raw, "secondary_keys"),
            selective=bool(raw.get("selective", False)),
            case_sensitive=bool(raw.get("case_sensitive") or False),
            use_regex=bool(raw.get("use_regex", False)),
            constant=bool(raw.get("constant", False)),
            enabled=bool(raw.get("enabled", True)),
            insertion_order=int(raw.get("insertion_order", 100) or 0),
            priority=int(raw.get("priority", 10) or 0),
            name=_text(raw, "name") or _text(raw, "comment"),
            id=raw.get("id") if isinstance(raw.get("id"), int) else None,
            extensions=dict(raw.get("extensions") or {}),
        ))
    return result


def character_from_card(card: dict[str, Any], *, path: Path | str = "<card>", character_id: str = "") -> Character:
    try:
        data = card_data(card)
        name = _text(data, "name").strip()
        if not name:
            raise ValueError("it has no name")
        character = Character(id=character_id or slugify(name), name=name)
        for card_key, attr in TEXT_FIELDS.items():
            setattr(character, attr, _text(data, card_key))
        character.alternate_greetings = _texts(data, "alternate_greetings")
        character.tags = _texts(data, "tags")
        extensions = data.get("extensions") or {}
        if not isinstance(extensions, dict):
            raise ValueError("'extensions' must be an object")
        character.extensions = copy.deepcopy(extensions)
        character.character_book = lorebook_from_card(data.get("character_book"))
    except (ValueError, TypeError) as exc:
        raise _bad(path, str(exc)) from exc
    character.raw_card = copy.deepcopy(card)
    return character


# -- writing ------------------------------------------------------------------------


def _book_to_card(book: Lorebook, original: Any) -> dict[str, Any]:
    out = copy.deepcopy(original) if isinstance(original, dict) else {}
    out.update({"name": book.name, "scan_depth": book.scan_depth, "token_budget": book.token_budget,
                "recursive_scanning": book.recursive_scanning, "extensions": book.extensions})
    old_entries = out.get("entries") if isinstance(out.get("entries"), list) else []
    entries = []
    for i, entry in enumerate(book.entries):
        raw = copy.deepcopy(old_entries[i]) if i < len(old_entries) and isinstance(old_entries[i], dict) else {}
        raw.update({
            "keys": entry.keys, "content": entry.content, "extensions": entry.extensions, "enabled": entry.enabled,
            "insertion_order": entry.insertion_order, "case_sensitive": entry.case_sensitive, "priority": entry.priority,
            "selective": entry.selective, "secondary_keys": entry.secondary_keys, "constant": entry.constant,
        })
        if entry.name:
            raw["name"] = entry.name
        if entry.id is not None:
            raw["id"] = entry.id
        if entry.use_regex or "use_regex" in raw:
            raw["use_regex"] = entry.use_regex
        entries.append(raw)
    out["entries"] = entries
    return out


def _overlay(data: dict[str, Any], character: Character) -> None:
    """Write the character's current fields into a card's data, touching only
    what differs, so an unedited import exports byte-identical fields."""
    current = card_data_from_character(character)
    for key, value in current.items():
        if key not in data and value in ("", [], {}, None):
            continue
        if data.get(key) != value and not (data.get(key) is None and value == ""):
            data[key] = value


def card_data_from_character(character: Character) -> dict[str, Any]:
    data: dict[str, Any] = {card_key: getattr(character, attr) for card_key, attr in TEXT_FIELDS.items()}
    data["alternate_greetings"] = list(character.alternate_greetings)
    data["tags"] = list(character.tags)
    data["extensions"] = copy.deepcopy(character.extensions)
    original_book = None
    if character.raw_card is not None:
        try:
            original_book = card_data(character.raw_card).get("character_book")
        except ValueError:
            original_book = None
    data["character_book"] = _book_to_card(character.character_book, original_book) if character.character_book else None
    if original_book is not None and character.character_book and _book_unchanged(character.character_book, original_book):
        data["character_book"] = copy.deepcopy(original_book)
    return data


def _book_unchanged(book: Lorebook, original: Any) -> bool:
    try:
        return lorebook_from_card(original) == book
    except (ValueError, TypeError):
        return False


def export_card(character: Character, spec: str = "chara_card_v3") -> dict[str, Any]:
    """The card as JSON: the imported card with edits applied, or a new card."""
    if character.raw_card is not None and (character.raw_card.get("spec") == spec or spec == "original"):
        card = copy.deepcopy(character.raw_card)
        _overlay(card_data(card), character)
        return card
    base = copy.deepcopy(card_data(character.raw_card)) if character.raw_card is not None else {}
    _overlay(base, character)
    if spec == "chara_card_v2":
        data = {k: v for k, v in base.items() if k in V2_FIELDS or k not in TEXT_FIELDS}
        data.pop("nickname", None)
        return {"spec": "chara_card_v2", "spec_version": "2.0", "data": data}
    base.setdefault("group_only_greetings", [])
    return {"spec": "chara_card_v3", "spec_version": "3.0", "data": base}


def export_card_json(character: Character) -> bytes:
    spec = character.raw_card.get("spec", "chara_card_v3") if character.raw_card else "chara_card_v3"
    card = export_card(character, "original" if character.raw_card is not None and spec in ("chara_card_v2", "chara_card_v3") else "chara_card_v3")
    return json.dumps(card, ensure_ascii=False, indent=2).encode("utf-8")


def export_card_png(character: Character, base_png: bytes | None = None) -> bytes:
    """A PNG holding both chunks: `ccv3` (V3) for new readers, `chara` (V2) for old ones."""
    image = base_png or blank_png()
    chunks = read_chunks(image)
    v3 = export_card(character, "chara_card_v3")
    v2 = export_card(character, "chara_card_v2")
    encode = lambda card: base64.b64encode(json.dumps(card, ensure_ascii=False).encode("utf-8")).decode("ascii")  # noqa: E731
    return write_chunks(replace_text_chunks(chunks, {"chara": encode(v2), "ccv3": encode(v3)}))


# -- importing into the library ----------------------------------------------------------


def slugify(name: str) -> str:
    ascii_name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode("ascii")
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_name.lower()).strip("-")[:48]
    return slug or "character"


def import_card(path: Path, dest_dir: Path | None = None) -> Character:
    """Read a card and save it as a character folder (a new id if the name is
    taken). Nothing is written unless the whole card reads cleanly."""
    dest_dir = dest_dir or locations.user_characters_dir()
    card, png = read_card_file(path)
    character = character_from_card(card, path=path)
    base = slugify(character.name)
    candidate, n = base, 1
    while (dest_dir / candidate).exists():
        n += 1
        candidate = f"{base}-{n}"
    folder = (dest_dir / candidate).resolve()
    if folder.parent != dest_dir.resolve():
        raise _bad(path, "its name would place it outside the characters folder")
    character.id = candidate
    save_character_folder(character, folder)
    if png is not None:
        tmp = folder / ".card.png.tmp"
        tmp.write_bytes(png)
        tmp.replace(folder / "card.png")
    character.source = folder
    return character


def remove_character_folder(folder: Path) -> None:
    shutil.rmtree(folder)
