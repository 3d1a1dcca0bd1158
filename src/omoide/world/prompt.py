"""World memory in a character's prompt.

The block goes in the stable part, after the card: it changes only when a
conversation ends, so prefix caches keep working between ends. Mention notes
(what the speaker remembers of an absent character just named) are volatile
and go in the tail; they never enter the transcript.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from omoide.domain.world import Participant, WorldView
from omoide.llm.stamps import STAMP, split_stamp


def world_block(view: WorldView, me: str, others: Sequence[Participant]) -> str:
    """`me`'s global memory, and for each other participant the descriptor and
    the consolidated memory; the goal too when there is only one other."""
    parts = []
    if view.global_memory.strip():
        parts.append(f"## What {me} carries\n{view.global_memory.strip()}")
    for other in others:
        rel = view.relationships.get(other.key)
        if rel is None:
            continue
        lines = []
        if rel.descriptor.strip():
            lines.append(f"{other.name} is, to {me}: {rel.descriptor.strip()}.")
        memory = new_to(rel.memory, view.global_memory)
        if memory:
            lines.append(memory)
        last = split_stamp(rel.pair_summaries[-1].text)[0] if rel.pair_summaries else ""
        if last:
            lines.append(f"{me} and {other.name} last talked {last}.")
        if len(others) == 1 and rel.goal.strip():
            lines.append(f"{me}'s goal for this conversation: {rel.goal.strip()}")
        if lines:
            parts.append(f"## {me} and {other.name}\n" + "\n".join(lines))
    return "\n\n".join(parts)


_STAMPED = re.compile(rf"(\s+)(?={STAMP})")
_SENTENCE_END = re.compile(r"(?<=[.!?…])(\s+)")


def _plain(text: str) -> str:
    return " ".join(text.split()).casefold()


def new_to(text: str, already: str) -> str:
    """`text` less what `already` says word for word: each dated line (or, in
    text with no dates, each sentence) that `already` holds is said once, there.
    With one other person, what a character carries of them is often what it
    carries at all, and a prompt pays for each copy."""
    text = text.strip()
    if not already.strip():
        return text
    held = _plain(already)
    pieces = _STAMPED.split(text)  # unit, space before the next, unit, ...
    if len(pieces) == 1:
        pieces = _SENTENCE_END.split(text)
    kept = ""
    for n in range(0, len(pieces), 2):
        if _plain(pieces[n]) not in held:
            kept += (pieces[n - 1] if kept else "") + pieces[n]
    return kept.strip()


def _remembered(view: WorldView, me: str, key: str, name: str) -> list[str]:
    """What `me` carries of `name`: the descriptor, then the consolidated memory
    (or, before there is one, what it heard second-hand)."""
    rel = view.relationships.get(key)
    if rel is None:
        return []
    known = []
    if rel.descriptor.strip():
        known.append(f"{name} is, to {me}: {rel.descriptor.strip()}.")
    if rel.memory.strip():
        known.append(rel.memory.strip())
    elif rel.offscreen:
        known.extend(i.text for i in rel.offscreen)
    return known


def mention_note(view: WorldView, me: str, key: str, name: str) -> str:
    known = _remembered(view, me, key, name)
    if not known:
        return f"{name} was just mentioned. {me} has no memories of {name} beyond what is said here."
    return f"{name} was just mentioned. What {me} remembers of {name}: " + " ".join(known)


def gossip_block(view: WorldView, me: str, key: str, name: str) -> str:
    """The gossip target in `me`'s prompt: what it remembers of `name`, with a light nudge."""
    known = _remembered(view, me, key, name)
    remembered = f"What {me} remembers of {name}: " + " ".join(known) if known else f"{me} knows little of {name} so far."
    return f"## {name}, on {me}'s mind\n{remembered}\nIf it comes naturally, {me} might bring {name} up."
