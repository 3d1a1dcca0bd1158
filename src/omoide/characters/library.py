"""Finding characters: the bundled ones, and the user's own (which win on a clash)."""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from pathlib import Path

from omoide import locations
from omoide.characters.folder import load_character_folder
from omoide.characters.model import Character
from omoide.errors import CharacterError


@dataclass
class Listing:
    characters: list[Character] = field(default_factory=list)
    problems: list[CharacterError] = field(default_factory=list)
    """Folders that could not be read: shown, never fatal."""


def _scan(directory: Path, *, bundled: bool, listing: Listing, seen: dict[str, int]) -> None:
    if not directory.is_dir():
        return
    for folder in sorted(p for p in directory.iterdir() if p.is_dir() and not p.name.startswith(".")):
        if not (folder / "character.toml").is_file():
            continue
        try:
            character = load_character_folder(folder, bundled=bundled)
        except CharacterError as exc:
            listing.problems.append(exc)
            continue
        if character.id in seen:
            listing.characters[seen[character.id]] = character
        else:
            seen[character.id] = len(listing.characters)
            listing.characters.append(character)


def scan_characters() -> Listing:
    listing = Listing()
    seen: dict[str, int] = {}
    _scan(locations.bundled_characters_dir(), bundled=True, listing=listing, seen=seen)
    _scan(locations.user_characters_dir(), bundled=False, listing=listing, seen=seen)
    return listing


def list_characters() -> list[Character]:
    return scan_characters().characters


def find_character(name_or_id: str) -> Character:
    listing = scan_characters()
    wanted = name_or_id.strip().lower()
    for character in listing.characters:
        if wanted in (character.id.lower(), character.name.lower(), character.nickname.lower()):
            return character
    choices = [c.id for c in listing.characters]
    close = difflib.get_close_matches(wanted, choices + [c.name.lower() for c in listing.characters], n=1, cutoff=0.5)
    hint = f"Did you mean '{close[0]}'? " if close else ""
    hint += f"Characters: {', '.join(choices) or 'none'}. `omoide characters list` shows them; `omoide characters import FILE` adds one."
    raise CharacterError(f"There is no character called '{name_or_id}'.", hint)


def default_character() -> Character:
    characters = list_characters()
    if not characters:
        raise CharacterError(
            "There are no characters.",
            f"Put a character folder in {locations.user_characters_dir()} or import a card with `omoide characters import FILE`.",
        )
    return characters[0]
