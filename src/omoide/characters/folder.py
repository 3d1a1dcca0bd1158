"""The character folder format: `character.toml`, optionally `lorebook.toml`
and `card.json` (a card kept verbatim when imported, so an export gives it back)."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import tomllib
from pathlib import Path
from typing import Any

from omoide.characters.model import Character, LoreEntry, Lorebook
from omoide.errors import CharacterError

TEXT_FIELDS = (
    "name", "nickname", "description", "personality", "scenario", "first_message", "example_dialogue",
    "system_prompt", "post_history_instructions", "creator_notes", "creator", "version",
)
LIST_FIELDS = ("alternate_greetings", "tags")
ENTRY_BOOLS = ("selective", "case_sensitive", "use_regex", "constant", "enabled")
ENTRY_INTS = ("insertion_order", "priority")


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise CharacterError(f"{path} does not exist.", "A character folder needs a character.toml.") from exc
    except UnicodeDecodeError as exc:
        raise CharacterError(f"{path} is not UTF-8 text.", "Save it as UTF-8.") from exc
    except tomllib.TOMLDecodeError as exc:
        raise CharacterError(f"{path} is not valid TOML: {exc}.", "Fix the line it names (multi-line text goes between ''' quotes).") from exc


def _text(data: dict[str, Any], key: str, path: Path) -> str:
    value = data.get(key, "")
    if not isinstance(value, str):
        raise CharacterError(f"{path}: '{key}' must be text, not {type(value).__name__}.", f"Write it as {key} = \"...\".")
    return value.strip()


def _texts(data: dict[str, Any], key: str, path: Path) -> list[str]:
    value = data.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise CharacterError(f"{path}: '{key}' must be a list of texts.", f'Write it as {key} = ["...", "..."].')
    return [v.strip() for v in value]


def load_lorebook(path: Path) -> Lorebook:
    data = _read_toml(path)
    entries = []
    raw_entries = data.get("entries", [])
    if not isinstance(raw_entries, list):
        raise CharacterError(f"{path}: 'entries' must be a list of [[entries]] tables.", "")
    for i, raw in enumerate(raw_entries, 1):
        if not isinstance(raw, dict):
            raise CharacterError(f"{path}: entry {i} is not a table.", "Write each entry under [[entries]].")
        keys = _texts(raw, "keys", path)
        content = _text(raw, "content", path)
        if not content:
            raise CharacterError(f"{path}: entry {i} has no content.", "Give it content = \"...\".")
        entry = LoreEntry(keys=keys, content=content, secondary_keys=_texts(raw, "secondary_keys", path), name=_text(raw, "name", path))
        for flag in ENTRY_BOOLS:
            if flag in raw:
                if not isinstance(raw[flag], bool):
                    raise CharacterError(f"{path}: entry {i}: '{flag}' must be true or false.", "")
                setattr(entry, flag, raw[flag])
        for number in ENTRY_INTS:
            if number in raw:
                if not isinstance(raw[number], int):
                    raise CharacterError(f"{path}: entry {i}: '{number}' must be a whole number.", "")
                setattr(entry, number, raw[number])
        entries.append(entry)
    book = Lorebook(entries=entries, name=_text(data, "name", path))
    for key in ("scan_depth", "token_budget"):
        if key in data:
            if not isinstance(data[key], int) or data[key] < 0:
                raise CharacterError(f"{path}: '{key}' must be a positive whole number.", "")
            setattr(book, key, data[key])
    return book


def load_character_folder(folder: Path, *, bundled: bool = False) -> Character:
    path = folder / "character.toml"
    data = _read_toml(path)
    name = _text(data, "name", path)
    if not name:
        raise CharacterError(f"{path} has no name.", 'Add a line: name = "...".')
    character = Character(
        id=folder.name,
        name=name,
        nickname=_text(data, "nickname", path),
        description=_text(data, "description", path),
        personality=_text(data, "personality", path),
        scenario=_text(data, "scenario", path),
        first_message=_text(data, "first_message", path),
        alternate_greetings=_texts(data, "alternate_greetings", path),
        example_dialogue=_text(data, "example_dialogue", path),
        system_prompt=_text(data, "system_prompt", path),
        post_history_instructions=_text(data, "post_history_instructions", path),
        creator_notes=_text(data, "creator_notes", path),
        tags=_texts(data, "tags", path),
        creator=_text(data, "creator", path),
        character_version=_text(data, "version", path),
        source=folder,
        bundled=bundled,
    )
    if (folder / "lorebook.toml").is_file():
        character.character_book = load_lorebook(folder / "lorebook.toml")
    card = folder / "card.json"
    if card.is_file():
        try:
            character.raw_card = json.loads(card.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise CharacterError(f"{card} is not valid JSON: {exc}.", "Delete it to keep only character.toml.") from exc
        _restore_card_details(character)
    return character


def _restore_card_details(character: Character) -> None:
    """What character.toml does not hold (extensions, lore entry ids and
    extensions) comes back from the kept card, as long as the lore is unedited."""
    from omoide.characters.cards import card_data, lorebook_from_card

    try:
        data = card_data(character.raw_card or {})
        if isinstance(data.get("extensions"), dict):
            character.extensions = data["extensions"]
        original = lorebook_from_card(data.get("character_book"))
    except (ValueError, TypeError):
        return
    if original is None or character.character_book is None:
        return

    def visible(book: Lorebook) -> list[tuple[object, ...]]:
        return [(e.name, tuple(e.keys), e.content, tuple(e.secondary_keys), e.selective, e.case_sensitive, e.use_regex,
                 e.constant, e.enabled, e.insertion_order, e.priority) for e in book.entries]

    mine = character.character_book
    if visible(mine) == visible(original) and (mine.name, mine.scan_depth, mine.token_budget) == (original.name, original.scan_depth, original.token_budget):
        character.character_book = original


def _toml_string(value: str) -> str:
    if "\n" not in value and len(value) < 80:
        return json.dumps(value, ensure_ascii=False)
    if "'''" not in value:
        return "'''\n" + value + "\n'''"
    escaped = value.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    return '"""\n' + escaped + '\n"""'


def character_toml(character: Character) -> str:
    values = {
        "name": character.name, "nickname": character.nickname, "description": character.description,
        "personality": character.personality, "scenario": character.scenario, "first_message": character.first_message,
        "example_dialogue": character.example_dialogue, "system_prompt": character.system_prompt,
        "post_history_instructions": character.post_history_instructions, "creator_notes": character.creator_notes,
        "creator": character.creator, "version": character.character_version,
    }
    lines = [f"{key} = {_toml_string(value)}" for key, value in values.items() if value or key == "name"]
    for key in LIST_FIELDS:
        items = character.alternate_greetings if key == "alternate_greetings" else character.tags
        if items:
            lines.append(f"{key} = [\n" + "".join(f"    {_toml_string(item)},\n" for item in items) + "]")
    return "\n\n".join(lines) + "\n"


def lorebook_toml(book: Lorebook) -> str:
    lines = [f"name = {_toml_string(book.name)}", f"scan_depth = {book.scan_depth}", f"token_budget = {book.token_budget}"]
    for entry in book.entries:
        lines.append("\n[[entries]]")
        if entry.name:
            lines.append(f"name = {_toml_string(entry.name)}")
        lines.append("keys = [" + ", ".join(_toml_string(k) for k in entry.keys) + "]")
        if entry.secondary_keys:
            lines.append("secondary_keys = [" + ", ".join(_toml_string(k) for k in entry.secondary_keys) + "]")
        lines.append(f"content = {_toml_string(entry.content)}")
        for flag in ENTRY_BOOLS:
            default = flag == "enabled"
            if getattr(entry, flag) != default:
                lines.append(f"{flag} = {'true' if getattr(entry, flag) else 'false'}")
        lines.append(f"insertion_order = {entry.insertion_order}")
        lines.append(f"priority = {entry.priority}")
    return "\n".join(lines) + "\n"


def save_character_folder(character: Character, folder: Path) -> None:
    """Write the folder atomically: build it beside the target, then rename."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}-", dir=folder.parent))
    try:
        (staging / "character.toml").write_text(character_toml(character), encoding="utf-8")
        if character.character_book and character.character_book.entries:
            (staging / "lorebook.toml").write_text(lorebook_toml(character.character_book), encoding="utf-8")
        if character.raw_card is not None:
            (staging / "card.json").write_text(json.dumps(character.raw_card, ensure_ascii=False, indent=1), encoding="utf-8")
        if folder.exists():
            backup = folder.with_name(f".{folder.name}.old")
            shutil.rmtree(backup, ignore_errors=True)
            os.replace(folder, backup)
            os.replace(staging, folder)
            shutil.rmtree(backup, ignore_errors=True)
        else:
            os.replace(staging, folder)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
