"""Familiarity: how well one character knows another, in [0, 1).

The only world field no model writes. It says nothing about liking (rivals
can know each other very well). Each shared conversation closes a fixed
share of the gap to 1, so the first meetings count most (diminishing
returns); each conversation a character has without the other shrinks it a
little.
"""

from __future__ import annotations

GAIN = 0.15
"""Share of the gap to 1 closed by one shared conversation."""
DECAY = 0.03
"""Share lost for every conversation the owner has without the other."""


def bump(value: float, gain: float = GAIN) -> float:
    return round(value + (1.0 - value) * gain, 4)


def decay(value: float, rate: float = DECAY) -> float:
    return round(value * (1.0 - rate), 4)


def parse(value: str | None) -> float:
    try:
        return float(value) if value else 0.0
    except ValueError:
        return 0.0


def show(value: float) -> str:
    return f"{value:.2f}"
