"""What SillyTavern says about each lore entry beyond its keys and content:
the secondary keys' logic, its own scan depth, chance, recursion, inclusion
group, timed effects and where it goes in the prompt.

SillyTavern keeps these under different names in its two formats: world-info
files in camelCase beside the entry's fields (`selectiveLogic`, `scanDepth`,
`excludeRecursion` ...), which omoide keeps in the entry's `extensions`; a
card's `character_book` in snake_case under `extensions` (`scan_depth`,
`exclude_recursion`, `group_weight` ...). Both are read here, with
SillyTavern's defaults (Usage/worldinfo.md; public/scripts/world-info.js).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import IntEnum
from typing import Any, Literal

from omoide.characters.model import LoreEntry

NoteRole = Literal["system", "user", "assistant"]
ROLES: tuple[NoteRole, ...] = ("system", "user", "assistant")
DEFAULT_DEPTH = 4
DEFAULT_WEIGHT = 100.0
MAX_DEPTH = 1000
"""SillyTavern's MAX_SCAN_DEPTH and MAX_INJECTION_DEPTH."""
MAX_TIMER = 10_000
"""Messages a sticky, cooldown or delay may last (more would be a typo)."""


class Logic(IntEnum):
    """How the secondary keys join the primary key (SillyTavern's selectiveLogic)."""

    AND_ANY = 0
    NOT_ALL = 1
    NOT_ANY = 2
    AND_ALL = 3


class Position(IntEnum):
    """Where a fired entry goes (SillyTavern's world_info_position)."""

    BEFORE = 0
    """Before the character's description."""
    AFTER = 1
    """After the scenario."""
    AN_TOP = 2
    AN_BOTTOM = 3
    AT_DEPTH = 4
    EXAMPLES_TOP = 5
    EXAMPLES_BOTTOM = 6
    OUTLET = 7
    """Only where `{{outlet::name}}` asks for it: omoide does not expand outlets, so never."""


@dataclass(frozen=True, slots=True)
class Rules:
    logic: Logic = Logic.AND_ANY
    scan_depth: int | None = None
    """Messages this entry scans; None: the book's."""
    case_sensitive: bool = False
    whole_words: bool = True
    probability: float = 100.0
    exclude_recursion: bool = False
    """Lore that fired cannot fire this entry."""
    prevent_recursion: bool = False
    """This entry's content never fires other entries."""
    delay_until_recursion: int = 0
    """Fires only from lore that fired (at this recursion level or later); 0: also from the messages."""
    groups: tuple[str, ...] = ()
    group_weight: float = DEFAULT_WEIGHT
    group_override: bool = False
    sticky: int = 0
    cooldown: int = 0
    delay: int = 0
    position: Position = Position.AFTER
    depth: int = DEFAULT_DEPTH
    role: NoteRole = "system"
    from_tavern: bool = False
    """Written by SillyTavern: its `use_regex` flag means nothing (only /…/ keys are regular expressions)."""

    @property
    def timed(self) -> bool:
        return bool(self.sticky or self.cooldown)


# SillyTavern's name in a world-info file, and in a card's extensions.
_NAMES = {
    "logic": ("selectiveLogic", "selectiveLogic"), "scan_depth": ("scanDepth", "scan_depth"),
    "case_sensitive": ("caseSensitive", "case_sensitive"), "whole_words": ("matchWholeWords", "match_whole_words"),
    "probability": ("probability", "probability"), "use_probability": ("useProbability", "useProbability"),
    "exclude_recursion": ("excludeRecursion", "exclude_recursion"), "prevent_recursion": ("preventRecursion", "prevent_recursion"),
    "delay_until_recursion": ("delayUntilRecursion", "delay_until_recursion"), "group": ("group", "group"),
    "group_weight": ("groupWeight", "group_weight"), "group_override": ("groupOverride", "group_override"),
    "sticky": ("sticky", "sticky"), "cooldown": ("cooldown", "cooldown"), "delay": ("delay", "delay"),
    "position": ("position", "position"), "depth": ("depth", "depth"), "role": ("role", "role"),
}
_TAVERN_MARKS = ("display_index", "displayIndex", "selectiveLogic", "uid", "addMemo", "match_whole_words", "scan_depth")


def _get(ext: dict[str, Any], field: str) -> Any:
    world_name, card_name = _NAMES[field]
    value = ext.get(world_name)
    return ext.get(card_name) if value is None else value


def _number(value: Any, default: float, low: float, high: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        if isinstance(value, str):
            try:
                return _number(float(value), default, low, high)
            except ValueError:
                return default
        return default
    return min(max(float(value), low), high)


def clamped_int(value: Any, default: int, low: int, high: int) -> int:
    return int(_number(value, default, low, high))


def _flag(value: Any, default: bool) -> bool:
    return value if isinstance(value, bool) else default


def _position(entry: LoreEntry, ext: dict[str, Any]) -> Position:
    value = _get(ext, "position")
    if isinstance(value, int) and not isinstance(value, bool) and value in Position._value2member_map_:
        return Position(value)
    # A card's own field (Character Card V2): before_char or after_char.
    return Position.BEFORE if entry.position == "before_char" else Position.AFTER


def role_of(value: Any) -> NoteRole:
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < len(ROLES):
        return ROLES[value]
    if isinstance(value, str) and value.strip().lower() in ROLES:
        return ROLES[ROLES.index(value.strip().lower())]
    return "system"


def rules_of(entry: LoreEntry) -> Rules:
    """The entry's rules, each field as SillyTavern defaults it when absent."""
    ext = entry.extensions if isinstance(entry.extensions, dict) else {}
    logic = clamped_int(_get(ext, "logic"), 0, 0, 3)
    depth = _get(ext, "scan_depth")
    case = _get(ext, "case_sensitive")
    probability = _number(_get(ext, "probability"), 100.0, 0.0, 100.0)
    if not _flag(_get(ext, "use_probability"), True):
        probability = 100.0
    recursion_delay = _get(ext, "delay_until_recursion")
    group = _get(ext, "group")
    return Rules(
        logic=Logic(logic),
        scan_depth=None if depth is None or isinstance(depth, bool) else clamped_int(depth, 0, 0, MAX_DEPTH),
        case_sensitive=case if isinstance(case, bool) else entry.case_sensitive,
        whole_words=_flag(_get(ext, "whole_words"), True),
        probability=probability,
        exclude_recursion=_flag(_get(ext, "exclude_recursion"), False),
        prevent_recursion=_flag(_get(ext, "prevent_recursion"), False),
        delay_until_recursion=(1 if recursion_delay is True else 0 if recursion_delay in (None, False)
                               else clamped_int(recursion_delay, 0, 0, MAX_DEPTH)),
        groups=tuple(g.strip() for g in group.split(",") if g.strip()) if isinstance(group, str) else (),
        group_weight=_number(_get(ext, "group_weight"), DEFAULT_WEIGHT, 0.0, 1e9),
        group_override=_flag(_get(ext, "group_override"), False),
        sticky=clamped_int(_get(ext, "sticky"), 0, 0, MAX_TIMER),
        cooldown=clamped_int(_get(ext, "cooldown"), 0, 0, MAX_TIMER),
        delay=clamped_int(_get(ext, "delay"), 0, 0, MAX_TIMER),
        position=_position(entry, ext),
        depth=clamped_int(_get(ext, "depth"), DEFAULT_DEPTH, 0, MAX_DEPTH),
        role=role_of(_get(ext, "role")),
        from_tavern=any(mark in ext for mark in _TAVERN_MARKS),
    )
