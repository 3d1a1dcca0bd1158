"""Lore keys against text, and what a scan reports (used by lore_engine and lorebook).

- a plain key matches as a whole word or phrase, ignoring letter case unless
  the entry is case-sensitive: "cat" fires on "the cat's bowl" but not on
  "concatenate" or "cats". Where a key starts or ends with a letter of a script
  written without spaces (Japanese, Chinese, Korean, Thai ...) that side is not
  checked, so "猫" fires on "黒猫が". An entry with SillyTavern's
  `matchWholeWords` off matches its keys anywhere, as a substring;
- a key written `/pattern/flags` is a regular expression (flags i, m and s),
  and so is every key of a `use_regex` entry (not SillyTavern's, which marks
  every entry so and means /…/ keys only). Regular expressions run on RE2
  (google-re2), in linear time: no key can backtrack for minutes. A key RE2
  cannot run (lookaround, backreferences, invalid) is skipped with the reason.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

from omoide.characters.lore_rules import Rules
from omoide.characters.model import LoreEntry


@dataclass(frozen=True, slots=True)
class FiredEntry:
    entry: LoreEntry
    reason: str
    """'constant', 'sticky', or which key matched where."""
    key: str = ""
    """The primary key that matched (empty for a constant or sticky entry)."""
    message_age: int | None = None
    """Where it matched: 0 is the newest message, 1 the one before it...; None: in lore that fired."""
    rules: Rules = field(default_factory=Rules)
    entry_key: str = ""
    """The entry's identity for timed effects: its book and its id."""
    started: bool = False
    """It fired anew (not kept by sticky): its sticky and cooldown count from here."""


@dataclass(frozen=True, slots=True)
class SkippedEntry:
    entry: LoreEntry
    reason: str
    """An invalid regex, the token budget, a failed chance, a lost inclusion group."""
    kind: Literal["problem", "budget", "chance"] = "problem"


class LoreScanResult(list[FiredEntry]):
    """The entries that fire, in insertion order; `skipped` says which were
    left out and why (a broken regex, the budget, chance)."""

    def __init__(self, fired: Sequence[FiredEntry] = (), skipped: Sequence[SkippedEntry] = ()) -> None:
        super().__init__(fired)
        self.skipped: list[SkippedEntry] = list(skipped)


_REGEX_KEY = re.compile(r"^/(.+)/([imsx]*)$", re.DOTALL)
# Plain keys stay on Python's re: an escaped phrase between two lookarounds
# cannot backtrack, and RE2 has no lookaround.
_UNSPACED = ((0x0E00, 0x0EFF), (0x1000, 0x109F), (0x1780, 0x17FF), (0x2E80, 0x9FFF), (0xAC00, 0xD7AF),
             (0xF900, 0xFAFF), (0xFF66, 0xFF9F), (0x20000, 0x3FFFF))


def _unspaced(ch: str) -> bool:
    return any(low <= ord(ch) <= high for low, high in _UNSPACED)


class Pattern(Protocol):
    def search(self, text: str) -> object: ...


def linear_regex(pattern: str, flags: str, key: str) -> Pattern | str:
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
def compile_key(key: str, use_regex: bool, case_sensitive: bool, whole_words: bool = True) -> Pattern | str:
    """The key's pattern, or why it cannot be used."""
    written = _REGEX_KEY.match(key)
    if written:
        return linear_regex(written.group(1), written.group(2), key)
    if use_regex:
        return linear_regex(key, "" if case_sensitive else "i", key)
    case = 0 if case_sensitive else re.IGNORECASE
    phrase = key.strip()
    if not phrase:
        return "an empty key"
    if not whole_words:
        return re.compile(re.escape(phrase), case)
    before = "" if _unspaced(phrase[0]) else r"(?<!\w)"
    after = "" if _unspaced(phrase[-1]) else r"(?!\w)"
    return re.compile(before + re.escape(phrase) + after, case)


def key_pattern(key: str, entry: LoreEntry, rules: Rules) -> Pattern | str:
    use_regex = entry.use_regex and not rules.from_tavern
    return compile_key(key, use_regex, rules.case_sensitive, rules.whole_words)


def where(age: int | None, lore: str = "") -> str:
    if age is None:
        return f"lore that fired ({lore})" if lore else "lore that fired"
    return "the last message" if age == 0 else f"message {age + 1} from the end"
