"""World info: which lore entries fire for the recent messages, and why."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from omoide.characters.model import LoreEntry, Lorebook


@dataclass(frozen=True, slots=True)
class FiredEntry:
    entry: LoreEntry
    reason: str
    """'constant', or which key matched in which of the recent messages."""


_REGEX_KEY = re.compile(r"^/(.+)/([imsx]*)$")


def _matcher(key: str, entry: LoreEntry) -> re.Pattern[str] | None:
    """A key matches as a whole word (or phrase); `/pattern/flags` or use_regex
    makes it a regular expression. An invalid regex matches nothing."""
    flags = 0 if entry.case_sensitive else re.IGNORECASE
    literal = _REGEX_KEY.match(key)
    try:
        if literal:
            for letter in literal.group(2):
                flags |= {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL, "x": re.VERBOSE}[letter]
            return re.compile(literal.group(1), flags)
        if entry.use_regex:
            return re.compile(key, flags)
    except re.error:
        return None
    return re.compile(rf"(?<!\w){re.escape(key.strip())}(?!\w)", flags) if key.strip() else None


def _first_match(keys: Sequence[str], entry: LoreEntry, texts: Sequence[str]) -> tuple[str, int] | None:
    for key in keys:
        pattern = _matcher(key, entry)
        if pattern is None:
            continue
        for age, text in enumerate(reversed(texts)):
            if pattern.search(text):
                return key, age
    return None


def scan(book: Lorebook | None, recent_texts: Sequence[str], *, count_tokens: Callable[[str], int] = lambda t: len(t) // 4 + 1) -> list[FiredEntry]:
    """Entries that fire for the last `scan_depth` messages, in insertion order,
    within the token budget (lowest priority dropped first)."""
    if book is None:
        return []
    window = list(recent_texts)[-book.scan_depth:] if book.scan_depth else []
    fired: list[FiredEntry] = []
    for entry in book.entries:
        if not entry.enabled:
            continue
        if entry.constant:
            fired.append(FiredEntry(entry, "constant"))
            continue
        hit = _first_match(entry.keys, entry, window)
        if hit is None:
            continue
        reason = f"key '{hit[0]}' in the {'last' if hit[1] == 0 else f'{hit[1] + 1}th-last'} message"
        if entry.selective and entry.secondary_keys:
            second = _first_match(entry.secondary_keys, entry, window)
            if second is None:
                continue
            reason += f" and secondary key '{second[0]}'"
        fired.append(FiredEntry(entry, reason))
    # Over budget: drop the lowest priority, then the latest in insertion order.
    by_drop_order = sorted(fired, key=lambda f: (f.entry.priority, -f.entry.insertion_order))
    total = sum(count_tokens(f.entry.content) for f in fired)
    dropped: set[int] = set()
    for candidate in by_drop_order:
        if total <= book.token_budget:
            break
        dropped.add(id(candidate))
        total -= count_tokens(candidate.entry.content)
    kept = [f for f in fired if id(f) not in dropped]
    return sorted(kept, key=lambda f: f.entry.insertion_order)
