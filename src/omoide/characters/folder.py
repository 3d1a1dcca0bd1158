"""The character folder: `character.toml`, optionally `lorebook.toml`, and
`card.json` (a card kept verbatim when imported, so an export gives it back;
`cards.load_character` applies it). The folder's name is the character's id."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import tomllib
from pathlib import Path
from typing import Any

from omoide import locations
from omoide.characters import tomlwrite
from omoide.characters.model import Character, LoreEntry, Lorebook
from omoide.errors import CharacterError

CHARACTER_FILE = "character.toml"
LOREBOOK_FILE = "lorebook.toml"
CARD_FILE = "card.json"

# character.toml key -> Character attribute
TEXT_FIELDS = {
    "name": "name", "nickname": "nickname", "description": "description", "personality": "personality",
    "scenario": "scenario", "first_message": "first_message", "example_dialogue": "example_dialogue",
    "system_prompt": "system_prompt", "post_history_instructions": "post_history_instructions",
    "creator_notes": "creator_notes", "creator": "creator", "version": "character_version",
}
LIST_FIELDS = ("alternate_greetings", "tags")
ENTRY_FLAGS = {"selective": False, "case_sensitive": False, "use_regex": False, "constant": False, "enabled": True}
ENTRY_NUMBERS = ("insertion_order", "priority")


MAX_FILE_BYTES = 20 * 1024 * 1024
"""The most read of a character's TOML file or kept card (a card's own limit)."""


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(locations.read_regular(path, MAX_FILE_BYTES).decode("utf-8"))
    except FileNotFoundError as exc:
        raise CharacterError(f"{path} does not exist.", "A character folder needs a character.toml with at least a name.") from exc
    except UnicodeDecodeError as exc:
        raise CharacterError(f"{path} is not UTF-8 text.", "Save it as UTF-8.") from exc
    except OSError as exc:
        raise CharacterError(f"{path} cannot be read ({exc.strerror or exc}).", "Check the file's permissions.") from exc
    except tomllib.TOMLDecodeError as exc:
        # tomllib's message already says "(at line N, column M)".
        raise CharacterError(f"{path} is not valid TOML: {exc}.", "Fix that line; multi-line text goes between ''' quotes.") from exc


def _text(data: dict[str, Any], key: str, path: Path, where: str = "") -> str:
    value = data.get(key, "")
    if not isinstance(value, str):
        raise CharacterError(f"{path}: {where}'{key}' must be text, not {type(value).__name__}.", f'Write it as {key} = "...".')
    return tidy(value)


def _texts(data: dict[str, Any], key: str, path: Path, where: str = "") -> list[str]:
    value = data.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise CharacterError(f"{path}: {where}'{key}' must be a list of texts.", f'Write it as {key} = ["...", "..."].')
    return [tidy(v) for v in value]


def _number(data: dict[str, Any], key: str, path: Path, where: str = "") -> int:
    value = data[key]
    if not isinstance(value, int) or isinstance(value, bool):
        raise CharacterError(f"{path}: {where}'{key}' must be a whole number.", f"Write it as {key} = 10.")
    return value


def load_lorebook(path: Path) -> Lorebook:
    """A `lorebook.toml`: a few settings and one [[entries]] table per entry."""
    data = _read_toml(path)
    raw_entries = data.get("entries", [])
    if not isinstance(raw_entries, list):
        raise CharacterError(f"{path}: 'entries' must be a list of [[entries]] tables.", "Start each entry with a [[entries]] line.")
    book = Lorebook(name=_text(data, "name", path))
    for key in ("scan_depth", "token_budget"):
        if key in data:
            setattr(book, key, _number(data, key, path))
    for i, raw in enumerate(raw_entries, 1):
        where = f"entry {i}: "
        if not isinstance(raw, dict):
            raise CharacterError(f"{path}: entry {i} is not a table.", "Start each entry with a [[entries]] line.")
        entry = LoreEntry(
            keys=_texts(raw, "keys", path, where),
            content=_text(raw, "content", path, where),
            secondary_keys=_texts(raw, "secondary_keys", path, where),
            name=_text(raw, "name", path, where),
        )
        for flag in ENTRY_FLAGS:
            if flag in raw:
                if not isinstance(raw[flag], bool):
                    raise CharacterError(f"{path}: {where}'{flag}' must be true or false.", f"Write it as {flag} = true.")
                setattr(entry, flag, raw[flag])
        for number in ENTRY_NUMBERS:
            if number in raw:
                setattr(entry, number, _number(raw, number, path, where))
        book.entries.append(entry)
    return book


def load_character_folder(folder: Path, *, bundled: bool = False) -> Character:
    """Read a character folder's TOML files. Raises CharacterError naming the file
    and the problem. `cards.load_character` also applies the kept `card.json`."""
    path = folder / CHARACTER_FILE
    if not folder.is_dir():
        raise CharacterError(f"{folder} is not a folder.", "A character is a folder holding a character.toml.")
    data = _read_toml(path)
    character = Character(id=folder.name, name="", source=folder, bundled=bundled)
    for key, attr in TEXT_FIELDS.items():
        setattr(character, attr, _text(data, key, path))
    if not character.name:
        raise CharacterError(f"{path} has no name.", 'Add a line: name = "...".')
    character.alternate_greetings = _texts(data, "alternate_greetings", path)
    character.tags = _texts(data, "tags", path)
    if (folder / LOREBOOK_FILE).is_file():
        character.character_book = load_lorebook(folder / LOREBOOK_FILE)
    return character


def read_kept_card(folder: Path) -> dict[str, Any] | None:
    """The card kept verbatim at import (`card.json`), if there is one."""
    card = folder / CARD_FILE
    if not card.is_file():
        return None
    try:
        raw_card = json.loads(locations.read_regular(card, MAX_FILE_BYTES).decode("utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise CharacterError(f"{card} is not a readable card: {exc}.", "Delete it to keep only character.toml.") from exc
    return raw_card if isinstance(raw_card, dict) else None


def tidy(text: str) -> str:
    """How text is written to the TOML files: for people, without the stray
    whitespace and CRLFs of cards (card.json keeps those)."""
    return text.replace("\r\n", "\n").strip()


def character_toml(character: Character) -> str:
    lines = ["# A character, hand-editable. {{char}} and {{user}} become the character's and your name."]
    for key, attr in TEXT_FIELDS.items():
        value = tidy(getattr(character, attr))
        if value or key == "name":
            lines.append(tomlwrite.assignment(key, value))
    for key in LIST_FIELDS:
        items = [tidy(item) for item in getattr(character, key)]
        if items:
            lines.append(tomlwrite.assignment(key, items))
    return "\n\n".join(lines) + "\n"


def lorebook_toml(book: Lorebook) -> str:
    lines = [
        "# Lore is added to the prompt when one of its keys appears in the recent messages.",
        tomlwrite.assignment("name", tidy(book.name)),
        tomlwrite.assignment("scan_depth", book.scan_depth),
    ]
    if book.token_budget is not None:
        lines.append(tomlwrite.assignment("token_budget", book.token_budget))
    for entry in book.entries:
        lines.append("\n[[entries]]")
        if tidy(entry.name):
            lines.append(tomlwrite.assignment("name", tidy(entry.name)))
        lines.append(tomlwrite.assignment("keys", [tidy(k) for k in entry.keys]))
        if entry.secondary_keys:
            lines.append(tomlwrite.assignment("secondary_keys", [tidy(k) for k in entry.secondary_keys]))
        lines.append(tomlwrite.assignment("content", tidy(entry.content)))
        for flag, default in ENTRY_FLAGS.items():
            if getattr(entry, flag) != default:
                lines.append(tomlwrite.assignment(flag, getattr(entry, flag)))
        for number in ENTRY_NUMBERS:
            lines.append(tomlwrite.assignment(number, getattr(entry, number)))
    return "\n".join(lines) + "\n"


def save_character_folder(character: Character, folder: Path, *, extra_files: dict[str, bytes] | None = None) -> None:
    """Write the folder atomically: build it beside the target, then rename it
    into place. Files already in the folder that omoide does not write (an
    image, notes) are carried over."""
    locations.private_dir(folder.parent)
    staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}-", dir=folder.parent))
    written = {CHARACTER_FILE, LOREBOOK_FILE, CARD_FILE, *(extra_files or {})}
    try:
        if folder.is_dir():
            for item in folder.iterdir():
                if item.name not in written:
                    (shutil.copytree if item.is_dir() else shutil.copy2)(item, staging / item.name)
        write = locations.write_private
        write(staging / CHARACTER_FILE, character_toml(character), make_parents=False)
        if character.character_book is not None:
            write(staging / LOREBOOK_FILE, lorebook_toml(character.character_book), make_parents=False)
        if character.raw_card is not None:
            write(staging / CARD_FILE, json.dumps(character.raw_card, ensure_ascii=False, indent=2), make_parents=False)
        for name, content in (extra_files or {}).items():
            write(staging / name, content, make_parents=False)
        if folder.exists():
            backup = staging.with_name(staging.name + "-old")
            os.replace(folder, backup)
            try:
                os.replace(staging, folder)
            except BaseException:
                os.replace(backup, folder)
                raise
            shutil.rmtree(backup, ignore_errors=True)
        else:
            os.replace(staging, folder)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
