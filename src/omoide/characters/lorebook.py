"""World info: which lore entries fire for the recent messages, and why.

Matching rules, in the order they apply:

- a disabled entry never fires; a `constant` one always does;
- keys are looked for in the last `scan_depth` messages (an entry's own
  `scanDepth` first), ignoring letter case unless the entry is
  `case_sensitive`; how a key matches (whole words, regular expressions on
  RE2) is in lore_match.py;
- a `selective` entry also needs its `secondary_keys` to pass its logic: one
  of them by default (SillyTavern's AND ANY), or all of them, none of them, or
  not all of them (with none listed, the primary key is enough, as SillyTavern
  does);
- SillyTavern's other rules (chance, inclusion groups, recursion, timed
  effects) are in lore_engine.py;
- the fired entries are ordered by `insertion_order`; when their content is
  over the budget (`token_budget`, or, where the book sets none, the share of
  the context the caller gives), keyed entries are dropped before constant
  ones, the lowest `priority` first, and among equals the latest in insertion
  order. Every dropped entry is listed in `skipped` with the reason.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path

from omoide import locations
from omoide.characters.books import lorebook_from_card, lorebook_from_world_info
from omoide.characters.lore_engine import DEFAULT_BUDGET, Source, scan_books
from omoide.characters.lore_match import FiredEntry, LoreScanResult, SkippedEntry
from omoide.characters.model import Lorebook
from omoide.errors import CharacterError

__all__ = ["DEFAULT_BUDGET", "FiredEntry", "LoreScanResult", "SkippedEntry", "load_lorebook_file", "scan"]

MAX_LOREBOOK_BYTES = 20 * 1024 * 1024


def _default_count(text: str) -> int:
    return len(text) // 4 + 1


def scan(
    book: Lorebook | None, recent_texts: Sequence[str], *, count_tokens: Callable[[str], int] = _default_count,
    budget: int = DEFAULT_BUDGET,
) -> LoreScanResult:
    """Entries of one book that fire for the recent messages (oldest first), in
    insertion order, within the token budget (the book's own, else `budget`)."""
    if book is None:
        return LoreScanResult()
    limit = book.token_budget if book.token_budget is not None else budget
    return scan_books([Source(book.name, book)], recent_texts, recursive=book.recursive_scanning,
                      count_tokens=count_tokens, budget=max(limit, 0))


def load_lorebook_file(path: Path) -> Lorebook:
    """A standalone lorebook: omoide's lorebook.toml, SillyTavern world info
    (JSON with an `entries` object), a card's `character_book` (or a V3
    `lorebook_v3` file), or a whole card holding one."""
    path = Path(path)
    if path.suffix.lower() == ".toml":
        from omoide.characters.folder import load_lorebook

        return load_lorebook(path)
    try:
        data = json.loads(locations.read_regular(path, MAX_LOREBOOK_BYTES).decode("utf-8-sig"))
    except (locations.NotAFile, locations.FileTooLarge) as exc:
        raise CharacterError(f"Cannot read the lorebook {path}: {exc.strerror}.", "Is this the right file?") from exc
    except OSError as exc:
        raise CharacterError(f"Cannot read the lorebook {path}: {exc.strerror or exc}.", "Check the path.") from exc
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise CharacterError(f"Cannot read the lorebook {path}: it is not valid JSON ({exc}).", "Export it again as JSON.") from exc
    try:
        if not isinstance(data, dict):
            raise ValueError("the JSON is not an object")
        if data.get("spec") == "lorebook_v3" or (data.get("spec") in ("chara_card_v2", "chara_card_v3") and isinstance(data.get("data"), dict)):
            inner = data.get("data")
            data = inner.get("character_book", inner) if isinstance(inner, dict) else inner
        if isinstance(data, dict) and isinstance(data.get("entries"), dict):
            return lorebook_from_world_info(data, name=path.stem)
        book = lorebook_from_card(data)
        if book is None or not isinstance(data, dict) or "entries" not in data:
            raise ValueError("it holds no lorebook entries")
        return book
    except (ValueError, TypeError) as exc:
        raise CharacterError(
            f"Cannot read the lorebook {path}: {exc}.",
            "omoide reads SillyTavern world info, a card's character_book, and lorebook.toml.",
        ) from exc
