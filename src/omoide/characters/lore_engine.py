"""One world-info scan over every lorebook a prompt uses, as SillyTavern runs it
(Usage/worldinfo.md; public/scripts/world-info.js checkWorldInfo).

In order, for each step:

1. every enabled entry not yet decided is checked: a `delay` keeps it out until
   the chat has that many messages; a cooldown keeps it out unless it is
   sticky; `delayUntilRecursion` entries wait for a recursion step (of their
   level), `excludeRecursion` ones never fire on one; a constant or sticky
   entry fires; otherwise a primary key must match in the entry's scan depth
   (its own `scanDepth`, else the book's) or in lore that fired, and the
   secondary keys must pass its logic (AND ANY, NOT ALL, NOT ANY, AND ALL);
2. inclusion groups: where several entries of one `group` fired, a sticky one
   keeps its place, then a `groupOverride` one (highest order) wins, else one
   is drawn by `groupWeight`; a group that already fired at an earlier step
   takes no more;
3. `probability`: an entry fires with that chance (sticky ones always do);
4. with recursive scanning, what fired (but `preventRecursion` entries) is
   scanned at the next step; at most MAX_STEPS steps, and none once the
   budget is spent.

Then the token budget (lorebook.py's rule: keyed entries go before constant
ones, the lowest `priority` first). Chance draws use the `rng` given, so a
seeded one repeats them.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from omoide.characters.lore_match import FiredEntry, LoreScanResult, SkippedEntry, key_pattern, where
from omoide.characters.lore_rules import Logic, Rules, rules_of
from omoide.characters.model import LoreEntry, Lorebook

MAX_STEPS = 8
"""Scan steps at most: the first, then recursion (SillyTavern's Max Recursion Steps, bounded here)."""
DEFAULT_BUDGET = 2048
"""The budget where neither the book nor the caller sets one: 25% of an 8k context."""


@dataclass(frozen=True, slots=True)
class Source:
    key: str
    """Which book, for timed effects: stays the same from one turn to the next."""
    book: Lorebook


@dataclass(frozen=True, slots=True)
class Timers:
    """Timed effects at the head being answered (see lore_state.py)."""

    chat_length: int = 0
    """Messages in the chat: a `delay` counts against it."""
    sticky: frozenset[str] = frozenset()
    cooldown: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class _Candidate:
    order: int
    entry: LoreEntry
    rules: Rules
    key: str
    scan_depth: int
    label: str


def sources_of(speaker_book: Lorebook | None, speaker_id: str, books: Sequence[Lorebook]) -> list[Source]:
    """`books` (the speaker's own first) as sources whose keys stay the same from one turn to the next."""
    return [Source(f"card:{speaker_id}" if book is speaker_book else f"book:{book.name}", book) for book in books]


def entry_key(source: str, index: int, entry: LoreEntry) -> str:
    return f"{source}#{entry.id if entry.id is not None else f'@{index}'}"


def label(entry: LoreEntry) -> str:
    return entry.name or (entry.keys[0] if entry.keys else "entry")


def candidates(sources: Sequence[Source]) -> list[_Candidate]:
    """Every entry, the books in the order given, each book's by its order (SillyTavern's
    'character lore first' strategy: the character's book, then the others)."""
    out: list[_Candidate] = []
    for source in sources:
        entries = sorted(enumerate(source.book.entries), key=lambda pair: -pair[1].insertion_order)
        for index, entry in entries:
            rules = rules_of(entry)
            depth = rules.scan_depth if rules.scan_depth is not None else max(source.book.scan_depth, 0)
            out.append(_Candidate(len(out), entry, rules, entry_key(source.key, index, entry), depth, label(entry)))
    return out


@dataclass(frozen=True, slots=True)
class _Hit:
    c: _Candidate
    why: str
    sticky: bool
    key: str = ""
    age: int | None = None


class _Scan:
    def __init__(self, texts: Sequence[str], expand_key: Callable[[str], str]) -> None:
        self.newest_first = list(reversed(texts))
        self.lore: list[tuple[str, str]] = []
        """(label, content) of lore that fired, for recursion."""
        self.expand_key = expand_key
        self.problems: dict[int, list[str]] = {}

    def find(self, c: _Candidate, keys: Sequence[str]) -> tuple[str, int | None, str] | None:
        """The first of `keys` that matches, and where: (key, message age or None, lore label)."""
        for key in keys:
            shown = self.expand_key(key)
            pattern = key_pattern(shown, c.entry, c.rules)
            if isinstance(pattern, str):
                self.problems.setdefault(c.order, []).append(pattern)
                continue
            for age, text in enumerate(self.newest_first[: c.scan_depth]):
                if pattern.search(text):
                    return key, age, ""
            for name, text in self.lore:
                if pattern.search(text):
                    return key, None, name
        return None

    def matches(self, c: _Candidate, sticky: bool) -> _Hit | None:
        """Why `c` fires, or None."""
        if c.entry.constant or sticky:
            return _Hit(c, "constant" if c.entry.constant else "sticky", sticky)
        hit = self.find(c, c.entry.keys)
        if hit is None:
            return None
        reason = f"key {hit[0]!r} in {where(hit[1], hit[2])}"
        second = [k for k in c.entry.secondary_keys if k.strip()]
        if not (c.entry.selective and second):
            return _Hit(c, reason, False, hit[0], hit[1])
        found = [self.find(c, [k]) for k in second]
        logic = c.rules.logic
        passed = {
            Logic.AND_ANY: any(found), Logic.AND_ALL: all(found),
            Logic.NOT_ANY: not any(found), Logic.NOT_ALL: not all(found),
        }[logic]
        if not passed:
            return None
        matched = [m for m in found if m is not None]
        if logic is Logic.AND_ANY:
            reason += f", with secondary key {matched[0][0]!r} in {where(matched[0][1], matched[0][2])}"
        elif logic is Logic.AND_ALL:
            reason += f", with every secondary key ({', '.join(repr(k) for k in second)})"
        elif logic is Logic.NOT_ANY:
            reason += f", and none of the secondary keys {second!r} (NOT ANY)"
        else:
            reason += f", and not every secondary key of {second!r} (NOT ALL)"
        return _Hit(c, reason, False, hit[0], hit[1])


def scan_books(
    sources: Sequence[Source], recent_texts: Sequence[str], *, timers: Timers = Timers(), recursive: bool = False,
    rng: random.Random | None = None, expand_key: Callable[[str], str] = str, expand_content: Callable[[str], str] = str,
    count_tokens: Callable[[str], int], budget: int = DEFAULT_BUDGET,
) -> LoreScanResult:
    """The entries of `sources` that fire for the recent messages (oldest first)."""
    rng = rng or random.Random()
    pool = candidates(sources)
    scan = _Scan(recent_texts, expand_key)
    fired: dict[int, FiredEntry] = {}
    decided: set[int] = set()
    skipped: list[SkippedEntry] = []
    levels = sorted({c.rules.delay_until_recursion for c in pool if c.rules.delay_until_recursion})
    level = levels.pop(0) if levels else 0
    recursing, spent = False, 0
    for _step in range(MAX_STEPS):
        now: list[_Hit] = []
        for c in pool:
            if c.order in decided or not c.entry.enabled:
                continue
            sticky = c.key in timers.sticky
            if timers.chat_length < c.rules.delay:
                continue
            if c.key in timers.cooldown and not sticky:
                continue
            if not sticky and c.rules.delay_until_recursion and (not recursing or c.rules.delay_until_recursion > level):
                continue
            if recursing and recursive and c.rules.exclude_recursion and not sticky:
                continue
            hit = scan.matches(c, sticky)
            if hit is not None:
                now.append(hit)
        now.sort(key=lambda hit: (not hit.sticky, hit.c.order))
        now = _inclusion_groups(now, fired, pool, rng, skipped)
        new: list[_Candidate] = []
        for hit in now:
            c = hit.c
            decided.add(c.order)
            if c.rules.probability < 100 and not hit.sticky and rng.random() * 100 >= c.rules.probability:
                skipped.append(SkippedEntry(c.entry, f"probability {c.rules.probability:g}%: not this time", "chance"))
                continue
            fired[c.order] = FiredEntry(c.entry, hit.why, hit.key, hit.age, c.rules, c.key, started=c.rules.timed and not hit.sticky)
            spent += count_tokens(c.entry.content)
            new.append(c)
        onward = [c for c in new if not c.rules.prevent_recursion]
        recursing = bool(recursive and onward and spent < budget)
        if not recursing and levels:
            recursing, level = True, levels.pop(0)
        if not recursing:
            break
        scan.lore += [(c.label, expand_content(c.entry.content)) for c in onward]
    for order, problems in scan.problems.items():
        if order not in fired:
            skipped.append(SkippedEntry(pool[order].entry, "; ".join(dict.fromkeys(problems))))
    kept = fit([fired[o] for o in sorted(fired)], budget, count_tokens, skipped)
    return LoreScanResult(sorted(kept, key=lambda f: f.entry.insertion_order), skipped)


def _inclusion_groups(now: list[_Hit], fired: dict[int, FiredEntry], pool: Sequence[_Candidate],
                      rng: random.Random, skipped: list[SkippedEntry]) -> list[_Hit]:
    """Leave one entry per inclusion group (SillyTavern's filterByInclusionGroups)."""
    out_of: dict[int, str] = {}
    taken = {g for order in fired for g in pool[order].rules.groups}
    groups: dict[str, list[_Hit]] = {}
    for hit in now:
        for group in hit.c.rules.groups:
            groups.setdefault(group, []).append(hit)
    for group, members in groups.items():
        members = [m for m in members if m.c.order not in out_of]
        winner: _Hit | None
        if any(m.sticky for m in members):
            winner = next(m for m in members if m.sticky)
            why = f"inclusion group '{group}': {winner.c.label} is sticky"
        elif group in taken:
            winner, why = None, f"inclusion group '{group}' already fired"
        elif len(members) <= 1:
            continue
        elif any(m.c.rules.group_override for m in members):
            winner = max((m for m in members if m.c.rules.group_override), key=lambda m: (m.c.entry.insertion_order, -m.c.order))
            why = f"inclusion group '{group}': {winner.c.label} comes first"
        else:
            total = sum(m.c.rules.group_weight for m in members)
            roll, running, winner = rng.random() * total, 0.0, members[-1]
            for m in members:
                running += m.c.rules.group_weight
                if roll <= running:
                    winner = m
                    break
            why = f"inclusion group '{group}': {winner.c.label} was drawn"
        for m in members:
            if winner is None or (m.c.order != winner.c.order and not m.sticky):
                out_of[m.c.order] = why
    for hit in now:
        if hit.c.order in out_of:
            skipped.append(SkippedEntry(hit.c.entry, out_of[hit.c.order], "chance"))
    return [hit for hit in now if hit.c.order not in out_of]


def fit(fired: list[FiredEntry], budget: int, count_tokens: Callable[[str], int], skipped: list[SkippedEntry]) -> list[FiredEntry]:
    """Within `budget` tokens: keyed entries are dropped before constant ones,
    the lowest priority first, and among equals the latest in insertion order."""
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
        skipped.append(SkippedEntry(candidate.entry, why, "budget"))
    return [f for f in fired if id(f) not in dropped]
