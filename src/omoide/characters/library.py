"""Finding characters: the bundled ones, and the user's own (which win when
they share an id)."""

from __future__ import annotations

import difflib
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from omoide import locations
from omoide.characters.cards import load_character
from omoide.characters.folder import CHARACTER_FILE
from omoide.characters.model import Character
from omoide.errors import CharacterError

DEFAULT_ID = "suzune"

log = logging.getLogger(__name__)


@dataclass
class Listing:
    characters: list[Character] = field(default_factory=list)
    problems: list[CharacterError] = field(default_factory=list)
    """Folders that could not be read: shown to the user, never fatal."""


def _scan(directory: Path, *, bundled: bool, listing: Listing, by_id: dict[str, Character]) -> None:
    try:
        folders = sorted(p for p in directory.iterdir() if p.is_dir() and not p.name.startswith("."))
    except FileNotFoundError:
        return
    except OSError as exc:
        listing.problems.append(CharacterError(f"{directory} cannot be read ({exc.strerror or exc}).", "Check its permissions."))
        return
    for folder in folders:
        if not (folder / CHARACTER_FILE).is_file():
            listing.problems.append(CharacterError(
                f"{folder} has no {CHARACTER_FILE}.", "Add one with at least a name, or move the folder out of the characters folder."
            ))
            continue
        try:
            by_id[folder.name] = load_character(folder, bundled=bundled)
        except CharacterError as exc:
            listing.problems.append(exc)


def scan_characters() -> Listing:
    """Every character that can be read, sorted by id, and the problems with the rest."""
    listing = Listing()
    by_id: dict[str, Character] = {}
    _scan(locations.bundled_characters_dir(), bundled=True, listing=listing, by_id=by_id)
    _scan(locations.user_characters_dir(), bundled=False, listing=listing, by_id=by_id)
    listing.characters = [by_id[key] for key in sorted(by_id)]
    return listing


def list_characters() -> list[Character]:
    return scan_characters().characters


def source_kind(character: Character) -> str:
    """'bundled', 'imported' (from a card) or 'user' (a folder the user made)."""
    if character.bundled:
        return "bundled"
    return "imported" if character.raw_card is not None else "user"


def find_character(name_or_id: str, *, notice: Callable[[str], None] | None = None) -> Character:
    """By id, then by name or nickname, ignoring letter case. When a name
    belongs to several characters the first by id is used, and `notice` (and
    the log) says which, and how to choose another."""
    listing = scan_characters()
    wanted = name_or_id.strip().casefold()
    for character in listing.characters:
        if wanted == character.id.casefold():
            return character
    named = [c for c in listing.characters if wanted in (c.name.casefold(), c.nickname.casefold())]
    if len(named) > 1:
        message = (
            f"'{name_or_id}' is the name of {len(named)} characters ({', '.join(c.id for c in named)}); "
            f"using {named[0].id}. Give the id to choose another."
        )
        log.warning("%s", message)
        if notice is not None:
            notice(message)
    if named:
        return named[0]
    ids = [c.id for c in listing.characters]
    names = {c.name.casefold(): c.id for c in listing.characters}
    close = difflib.get_close_matches(wanted, ids + list(names), n=1, cutoff=0.5)
    hint = f"Did you mean '{names.get(close[0], close[0])}'? " if close else ""
    hint += f"Available: {', '.join(ids) or 'none'}. `omoide characters import FILE` adds one from a card."
    raise CharacterError(f"There is no character called '{name_or_id}'.", hint)


def default_character() -> Character:
    """Suzune when she is there, else the first character by id."""
    characters = list_characters()
    if not characters:
        raise CharacterError(
            "There are no characters.",
            f"Put a character folder in {locations.user_characters_dir()} or import a card with `omoide characters import FILE`.",
        )
    return next((c for c in characters if c.id == DEFAULT_ID), characters[0])
