"""Standalone lorebooks attached to a character or to every chat.

They live in the data directory, never inside a character's folder, so shipped
characters can have them too: `lorebooks/*` applies everywhere,
`lorebooks/<character id>/*` to that character.
"""

from __future__ import annotations

import logging
from pathlib import Path

from omoide import locations
from omoide.characters.lorebook import MAX_LOREBOOK_BYTES, load_lorebook_file
from omoide.characters.model import Character, Lorebook
from omoide.errors import CharacterError

log = logging.getLogger(__name__)
SUFFIXES = (".json", ".toml")


def _files(directory: Path) -> list[Path]:
    if not directory.is_dir():
        return []
    return sorted(p for p in directory.iterdir() if p.is_file() and p.suffix.lower() in SUFFIXES)


def lorebooks_for(character: Character) -> tuple[list[Lorebook], list[CharacterError]]:
    """The character's own book, then its attached books, then the global ones.
    A file that cannot be read is reported, never fatal."""
    books: list[Lorebook] = [character.character_book] if character.character_book else []
    problems: list[CharacterError] = []
    root = locations.lorebooks_dir()
    for path in [*_files(root / character.id), *_files(root)]:
        try:
            books.append(load_lorebook_file(path))
        except CharacterError as exc:
            log.warning("skipping lorebook %s: %s", path, exc)
            problems.append(exc)
    return books, problems


def attach_lorebook(path: Path, character: Character | None) -> Path:
    """Check that `path` reads as a lorebook, then copy it in (for `character`,
    or for every chat when None). Returns where it was put."""
    book = load_lorebook_file(path)
    if not book.entries:
        raise CharacterError(f"The lorebook {path} has no entries.", "Is it the right file?")
    target_dir = locations.lorebooks_dir() / character.id if character else locations.lorebooks_dir()
    locations.private_dir(target_dir)
    target = target_dir / Path(path).name
    try:
        locations.write_private(target, locations.read_regular(Path(path), MAX_LOREBOOK_BYTES))
    except OSError as exc:
        raise CharacterError(f"Cannot copy the lorebook {path} to {target}: {exc.strerror or exc}.",
                             "Check the free disk space and the folder's permissions.") from exc
    return target
