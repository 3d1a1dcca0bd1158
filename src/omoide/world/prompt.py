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


def world_block(view: WorldView, me: str, others: Sequence[Participant], said: str = "") -> str:
    """`me`'s global memory, and for each other participant the descriptor and
    the consolidated memory; the goal too when there is only one other. What
    `said` (the summary in the same prompt) holds word for word is left to it."""
    parts = []
    carried = new_to(view.global_memory, said)
    if carried:
        parts.append(f"## What {me} carries\n{carried}")
    for other in others:
        rel = view.relationships.get(other.key)
        if rel is None:
            continue
        lines = []
        if rel.descriptor.strip():
            lines.append(f"{other.name} is, to {me}: {rel.descriptor.strip()}.")
        memory = new_to(rel.memory, f"{view.global_memory}\n{said}")
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
_HEADER = re.compile(rf"^{STAMP}\s*(?:[^\n:.!?]{{1,80}}? said:\s*)?")
"""A dated line's date and speaker ("[05/03 19:00] Kai said: ")."""


def _plain(text: str) -> str:
    return " ".join(text.split()).casefold()


def new_to(text: str, already: str) -> str:
    """`text` less what `already` says word for word: each sentence that
    `already` holds is said once, there, whatever date or speaker stands before
    it (a dated line left with none is dropped whole). With one other person,
    what a character carries of them is often what it carries at all, and the
    summary in the same prompt quotes the same lines: a prompt pays for each copy."""
    text = text.strip()
    if not already.strip():
        return text
    held = _plain(already)
    pieces = _STAMPED.split(text)  # unit, space before the next, unit, ...
    kept = ""
    for n in range(0, len(pieces), 2):
        unit = _unsaid(pieces[n], held)
        if unit:
            kept += (pieces[n - 1] if kept else "") + unit
    return kept.strip()


def _unsaid(unit: str, held: str) -> str:
    """A dated line (or undated text) less its sentences `held` holds: its date and
    speaker and what is left, or "" when nothing is."""
    found = _HEADER.match(unit)
    head = found.group() if found else ""
    pieces = _SENTENCE_END.split(unit[len(head):])
    kept = ""
    for n in range(0, len(pieces), 2):
        if _plain(pieces[n]) not in held:
            kept += (pieces[n - 1] if kept else "") + pieces[n]
    return head + kept if kept.strip() else ""


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
