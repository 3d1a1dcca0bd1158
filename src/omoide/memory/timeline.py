"""The running summary laid out for a prompt cache (`[memory] summary_placement`).

A compression appends a part to the running summary (summary.append_segment)
and drops the messages it covers from the window. Shown where the summary
always stood, before the window, the new part is text inserted ahead of
everything a prompt cache holds, and llama.cpp's cache (which skips removed
text but never inserted text) evaluates the whole window again, for every
speaker of a scene: most of what a scene's prompts evaluated went there
(docs/engine.md). Laid out as a timeline, the summary as it stood at its last
rewrite (the base) stays before the window and each part appended since sits
where it was written, after the message its checkpoint is anchored at; once
that message has left the window the part is simply first. A compression then
only removes messages and adds a part at the end, and the next rewrite (at
summary_merge_chars) moves everything back before the window.
"""

from __future__ import annotations

from dataclasses import replace

from omoide.domain.chat import MemoryState, Recap, Summary, SummaryTimeline
from omoide.store import Store
from omoide.store.memory import MEMORY_DIARY_CAP

MAX_RECAPS = 64
"""Parts walked back from the newest checkpoint; older ones stay in the base
(a summary_merge_chars far above the default could otherwise walk the whole chat)."""


def appended_part(before: str, after: str) -> str | None:
    """The part `after` appended to `before` (summary.append_segment's form), or
    None when `after` rewrote it."""
    before = before.rstrip()
    if not before:
        return after.strip() or None
    if not after.startswith(before) or not after[len(before):].startswith("\n\n"):
        return None
    return after[len(before):].strip() or None


async def summary_timeline(store: Store, newest: Summary) -> tuple[Summary | None, list[Recap]]:
    """(base, parts appended since it, oldest first) for the chat's checkpoint
    `newest`: the base is the newest checkpoint that rewrote the summary or
    changed only the diary (a diary compression), None when every part since
    the first was appended."""
    recaps: list[Recap] = []
    current = newest
    while True:
        before = await store.memory.checkpoint_before(current)
        part = appended_part(before.content if before else "", current.content)
        if part is None:  # a rewrite, or a checkpoint of the diary alone
            base: Summary | None = current
            break
        recaps.append(Recap(current.anchor_id, part))
        if before is None or len(recaps) >= MAX_RECAPS:
            base = before
            break
        current = before
    return base, recaps[::-1]


async def with_timeline(store: Store, state: MemoryState, head_id: int) -> MemoryState:
    """`state` with its summary's timeline (MemoryState.timeline), when the
    chat's summary had parts appended since its last rewrite."""
    summary = state.summary
    if summary is None or summary.owner is not None:
        return state
    base, recaps = await summary_timeline(store, summary)
    if not recaps:
        return state
    fold = base.diary_to_id if base else None
    _, diary_head = await store.memory.pointers(head_id)
    stable = await store.memory.diary_chain(fold, limit=MEMORY_DIARY_CAP) if fold is not None else []
    new = await store.memory.diary_chain(diary_head, stop_at=fold, limit=MEMORY_DIARY_CAP)
    timeline = SummaryTimeline(base=base.content if base else "", recaps=tuple(recaps), stable_diary=stable, new_diary=new)
    return replace(state, timeline=timeline)
