"""Where a character's portrait is: the image of the card it came from (an
imported PNG card keeps it as `card.png` in the character's folder), or a
`portrait.png` put in the folder by hand. Reading the pixels is the TUI's
(`tui/widgets/portrait.py`); this only finds the file."""

from __future__ import annotations

from pathlib import Path

from omoide.characters.model import Character

PORTRAIT_FILES = ("portrait.png", "card.png")
"""Looked for in a character's folder, in this order."""
MAX_PORTRAIT_BYTES = 16 * 1024 * 1024
"""A larger file is not read (a card image is a few hundred KiB)."""


def portrait_file(character: Character) -> Path | None:
    """The character's portrait file, or None when it has none (or one too large to read)."""
    source = character.source
    if source is None:
        return None
    return portrait_in(source)


def portrait_in(source: Path) -> Path | None:
    """The portrait in a character's folder (or the PNG card itself), or None."""
    candidates = [source] if source.suffix.lower() == ".png" else [source / name for name in PORTRAIT_FILES]
    for path in candidates:
        try:
            if path.is_file() and 0 < path.stat().st_size <= MAX_PORTRAIT_BYTES:
                return path
        except OSError:
            continue
    return None
