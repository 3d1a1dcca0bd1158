"""World info: which lore entries fire for the recent messages, and why.

Matching rules, in the order they apply:

- a disabled entry never fires; a `constant` one always does;
- keys are looked for in the last `scan_depth` messages, ignoring letter case
  unless the entry is `case_sensitive`;
- a plain key matches as a whole word or phrase: "cat" fires on "the cat's
  bowl" but not on "concatenate" or "cats". Where a key starts or ends with a
  letter of a script written without spaces (Japanese, Chinese, Korean, Thai
  ...) that side is not checked, so "猫" fires on "黒猫が";
- a key written `/pattern/flags` is a regular expression (flags i, m and s),
  and so is every key of a `use_regex` entry. Regular expressions run on RE2
  (google-re2), which matches in linear time: no key, however written, can
  backtrack for minutes. RE2 has no lookaround and no backreferences; a key
  that uses them, or is invalid, is skipped with the reason reported (naming
  the entry), never an error;
- a `selective` entry also needs one of its `secondary_keys` (with none
  listed, the primary key is enough, as SillyTavern does);
- the fired entries are ordered by `insertion_order`; when their content is
  over the budget (`token_budget`, or, where the book sets none, the share of
  the context the caller gives), keyed entries are dropped before constant
  ones, the lowest `priority` first, and among equals the latest in insertion
  order. Every dropped entry is listed in `skipped` with the reason.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from omoide.characters.books import lorebook_from_card, lorebook_from_world_info
from omoide.characters.model import LoreEntry, Lorebook
from omoide.errors import CharacterError

MAX_LOREBOOK_BYTES = 20 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class FiredEntry:
    entry: LoreEntry
    reason: str
    """'constant', or which key matched in which of the recent messages."""
    key: str = ""
    """The primary key that matched (empty for a constant entry)."""
    message_age: int | None = None
    """Where it matched: 0 is the newest message, 1 the one before it..."""


@dataclass(frozen=True, slots=True)
class SkippedEntry:
    entry: LoreEntry
    reason: str
    """An invalid regex, or the token budget."""


class LoreScanResult(list[FiredEntry]):
    """The entries that fire, in insertion order; `skipped` says which were
    left out and why (a broken regex, the budget)."""

    def __init__(self, fired: Sequence[FiredEntry] = (), skipped: Sequence[SkippedEntry] = ()) -> None:
        super().__init__(fired)
        self.skipped: list[SkippedEntry] = list(skipped)


_REGEX_KEY = re.compile(r"^/(.+)/([imsx]*)$", re.DOTALL)
# Plain keys stay on Python's re: an escaped phrase between two lookarounds
# cannot backtrack, and RE2 has no lookaround.
_FLAGS = "ims"
# Scripts written without spaces between words: no word boundary is checked there.
_UNSPACED = ((0x0E00, 0x0EFF), (0x1000, 0x109F), (0x1780, 0x17FF), (0x2E80, 0x9FFF), (0xAC00, 0xD7AF),
             (0xF900, 0xFAFF), (0xFF66, 0xFF9F), (0x20000, 0x3FFFF))


def _unspaced(ch: str) -> bool:
    return any(low <= ord(ch) <= high for low, high in _UNSPACED)


class Pattern(Protocol):
    def search(self, text: str) -> object: ...


def _linear_regex(pattern: str, flags: str, key: str) -> Pattern | str:
    """A user's regular expression on RE2 (linear time), or why it cannot be used."""
    if "x" in flags:
        return f"regex {key!r}: the x flag is not supported"
    try:
        import re2  # type: ignore[import-untyped]
    except ImportError:
        return f"regex {key!r} skipped: regular expression keys need the google-re2 package (pip install google-re2)"
    options = re2.Options()
    options.log_errors = False  # RE2 would print to stderr, under the TUI
    inline = "".join(sorted(set(flags)))
    try:
        compiled: Pattern = re2.compile(f"(?{inline}){pattern}" if inline else pattern, options)
    except (re2.error, TypeError, ValueError) as exc:
        reason = exc.args[0].decode("utf-8", "replace") if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        return f"invalid regex {key!r} (RE2 has no lookaround or backreferences): {reason}"
    return compiled


@functools.lru_cache(maxsize=2048)
def _compile(key: str, use_regex: bool, case_sensitive: bool) -> Pattern | str:
    """The key's pattern, or why it cannot be used."""
    written = _REGEX_KEY.match(key)
    if written:
        return _linear_regex(written.group(1), written.group(2), key)
    if use_regex:
        return _linear_regex(key, "" if case_sensitive else "i", key)
    case = 0 if case_sensitive else re.IGNORECASE
    phrase = key.strip()
    if not phrase:
        return "an empty key"
    before = "" if _unspaced(phrase[0]) else r"(?<!\w)"
    after = "" if _unspaced(phrase[-1]) else r"(?!\w)"
    return re.compile(before + re.escape(phrase) + after, case)


def _find(keys: Sequence[str], entry: LoreEntry, texts: Sequence[str], problems: list[str]) -> tuple[str, int] | None:
    """The first key that matches, and in which message (0 = newest)."""
    for key in keys:
        pattern = _compile(key, entry.use_regex, entry.case_sensitive)
        if isinstance(pattern, str):
            problems.append(pattern)
            continue
        for age, text in enumerate(reversed(texts)):
            if pattern.search(text):
                return key, age
    return None


def _where(age: int) -> str:
    return "the last message" if age == 0 else f"message {age + 1} from the end"


def _default_count(text: str) -> int:
    return len(text) // 4 + 1


DEFAULT_BUDGET = 2048
"""The budget where neither the book nor the caller sets one: 25% of an 8k context."""


def scan(
    book: Lorebook | None, recent_texts: Sequence[str], *, count_tokens: Callable[[str], int] = _default_count,
    budget: int = DEFAULT_BUDGET,
) -> LoreScanResult:
    """Entries that fire for the recent messages (oldest first), in insertion
    order, within the token budget."""
    if book is None:
        return LoreScanResult()
    depth = max(book.scan_depth, 0)
    window = list(recent_texts)[-depth:] if depth else []
    fired: list[FiredEntry] = []
    skipped: list[SkippedEntry] = []
    for entry in book.entries:
        if not entry.enabled:
            continue
        if entry.constant:
            fired.append(FiredEntry(entry, "constant"))
            continue
        problems: list[str] = []
        hit = _find(entry.keys, entry, window, problems)
        second = None
        if hit is not None and entry.selective and entry.secondary_keys:
            second = _find(entry.secondary_keys, entry, window, problems)
        if hit is None or (second is None and entry.selective and entry.secondary_keys):
            if problems:
                skipped.append(SkippedEntry(entry, "; ".join(problems)))
            continue
        reason = f"key {hit[0]!r} in {_where(hit[1])}"
        if second is not None:
            reason += f", with secondary key {second[0]!r} in {_where(second[1])}"
        fired.append(FiredEntry(entry, reason, hit[0], hit[1]))
    limit = book.token_budget if book.token_budget is not None else budget
    kept = _fit(fired, max(limit, 0), count_tokens, skipped)
    return LoreScanResult(sorted(kept, key=lambda f: f.entry.insertion_order), skipped)


def _fit(fired: list[FiredEntry], budget: int, count_tokens: Callable[[str], int], skipped: list[SkippedEntry]) -> list[FiredEntry]:
    cost = {id(f): count_tokens(f.entry.content) for f in fired}
    total = sum(cost.values())
    dropped: set[int] = set()
    for candidate in sorted(fired, key=lambda f: (f.entry.constant, f.entry.priority, -f.entry.insertion_order)):
        if total <= budget:
            break
        dropped.add(id(candidate))
        total -= cost[id(candidate)]
        why = f"over the token budget ({budget})"
        if candidate.entry.constant:
            why += "; a constant entry, dropped only after every keyed one"
        skipped.append(SkippedEntry(candidate.entry, why))
    return [f for f in fired if id(f) not in dropped]


def load_lorebook_file(path: Path) -> Lorebook:
    """A standalone lorebook: omoide's lorebook.toml, SillyTavern world info
    (JSON with an `entries` object), a card's `character_book` (or a V3
    `lorebook_v3` file), or a whole card holding one."""
    path = Path(path)
    if path.suffix.lower() == ".toml":
        from omoide.characters.folder import load_lorebook

        return load_lorebook(path)
    try:
        if path.stat().st_size > MAX_LOREBOOK_BYTES:
            raise CharacterError(f"Cannot read the lorebook {path}: it is over {MAX_LOREBOOK_BYTES // 1_048_576} MiB.", "Is this the right file?")
        data = json.loads(path.read_bytes().decode("utf-8-sig"))
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
