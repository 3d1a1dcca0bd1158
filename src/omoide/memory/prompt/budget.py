"""Budgets for the layers the fit to the context never cuts: pins and
corrections. Each may take a share of the context; past it, the oldest are left
out (the newest pin is what you care about now, and a newer correction says
what is true), and the prompt's notices say how many. 2,000 pins once made a
1 MB request at an 8,192-token context, the card itself cut to make room.

Counted by the four-characters-a-token estimate: the fit counts the whole prompt
exactly afterwards, and this only has to keep the two layers in proportion."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from omoide.memory.corrections import Correction

PINS_PERCENT = 10
"""Share of the context the pinned facts may take."""
CORRECTIONS_PERCENT = 10
"""Share of the context your corrections may take."""

T = TypeVar("T")


def estimate(text: str) -> int:
    return len(text) // 4 + 1


def newest_within(items: Sequence[T], budget: int, cost: Callable[[T], int]) -> tuple[list[T], int]:
    """The newest of `items` (oldest first) whose costs add up to at most `budget`,
    in their order, and how many older ones are left out."""
    kept: list[T] = []
    used = 0
    for item in reversed(items):
        used += cost(item)
        if used > budget:
            break
        kept.append(item)
    kept.reverse()
    return kept, len(items) - len(kept)


def pins_sent(pinned: Sequence[str], context_size: int) -> tuple[list[str], int]:
    """The pins (oldest first) a prompt holds at `context_size`, and how many of the oldest it leaves out."""
    return newest_within(pinned, context_size * PINS_PERCENT // 100, lambda fact: estimate(f"- {fact}\n"))


def corrections_sent(corrections: Sequence[Correction], context_size: int) -> tuple[list[Correction], int]:
    """The corrections (oldest first) a prompt holds, and how many of the oldest it leaves out."""
    return newest_within(corrections, context_size * CORRECTIONS_PERCENT // 100, lambda fix: estimate(fix.text) + 8)


def left_out_notices(name: str, pins: tuple[int, int], corrections: tuple[int, int]) -> list[str]:
    """What the prompt's notices say of (left out, of how many) pins and corrections."""
    notes = []
    left, total = pins
    if left:
        notes.append(f"{left:,} of the {total:,} pins for {name} are not sent, the oldest: pins may take "
                     f"{PINS_PERCENT}% of the context. /pins marks them; /unpin what is no longer true.")
    left, total = corrections
    if left:
        notes.append(f"{left:,} of your {total:,} corrections in this chat are not sent, the oldest: corrections may "
                     f"take {CORRECTIONS_PERCENT}% of the context.")
    return notes
