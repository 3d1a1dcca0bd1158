"""Timed effects of lore entries (sticky, cooldown, delay) at one head of a chat.

SillyTavern (Usage/worldinfo.md, Timed Effects) measures them in messages:
sticky keeps an entry in for N messages after it fired, cooldown keeps it
out for N messages after it fired (after its sticky ends, when it has one),
delay keeps it out until the chat has N messages; effects belong to the chat
where the entry fired, a branch inherits its parent's, and an effect set at
a message the chat has not moved past (a swipe, a regenerated reply) is gone.

omoide records when an entry fires anew, anchored at the message the prompt
answered (store/lore.py). The effects at a head are read from the records on
the path to it, so a restored branch, a swipe or /undo has the effects of its
own past, with nothing to snapshot: the anchor of the head being answered is
never counted (the chat has not moved past it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from omoide.characters.lore_engine import Timers
from omoide.characters.lore_rules import Rules


@dataclass(frozen=True, slots=True)
class Activation:
    entry_key: str
    chat_length: int
    """Messages on the path when it fired (the message it answered included)."""


def span(rules: Mapping[str, Rules]) -> int:
    """How far back (in messages) a record can still have an effect."""
    return max((r.sticky + r.cooldown for r in rules.values()), default=0)


def timers_at(activations: Sequence[Activation], rules: Mapping[str, Rules], chat_length: int) -> Timers:
    """The effects at a head where the chat has `chat_length` messages;
    `activations` are the records on the path before it."""
    latest: dict[str, int] = {}
    for record in activations:
        if record.chat_length < chat_length:
            latest[record.entry_key] = max(latest.get(record.entry_key, 0), record.chat_length)
    sticky: set[str] = set()
    cooldown: set[str] = set()
    for key, fired_at in latest.items():
        entry = rules.get(key)
        if entry is None:
            continue
        if entry.sticky and chat_length <= fired_at + entry.sticky:
            sticky.add(key)
            continue
        cools_from = fired_at + entry.sticky
        if entry.cooldown and cools_from < chat_length <= cools_from + entry.cooldown:
            cooldown.add(key)
    return Timers(chat_length, frozenset(sticky), frozenset(cooldown))
