"""The running summary laid out for a prompt cache (`[memory] summary_placement`).

A compression appends a part to the running summary (summary.append_segment)
and drops the messages it covers from the window; a rewrite (at
summary_merge_chars) replaces the whole of it. Shown where the summary always
stood, before the window, either is text inserted ahead of everything a
prompt cache holds, and llama.cpp's cache (which skips removed text but never
inserted text) evaluates the whole window again, for every speaker of a
scene: most of what a scene's prompts evaluated went there (docs/engine.md),
and a rewrite's turn read 10 % of its prompt from the cache. Laid out as a
timeline, the last rewrite and each part appended since sit where they were
written, after the message their checkpoint is anchored at; once that message
has left the window they are simply first. A compression then only removes
messages and adds a part at the end, and a rewrite removes the old summary
and adds the new one at the end. The diary before the window is as it was
(its fold follows the newest checkpoint): it changes only when entries were
saved since the last compression.
"""

from __future__ import annotations

from dataclasses import replace

from omoide.domain.chat import MemoryState, Recap, Summary, SummaryTimeline
from omoide.store import Store

MAX_CHECKPOINTS = 64
"""Checkpoints walked back from the newest; parts older than that stay in the
base (a summary_merge_chars far above the default could otherwise walk the whole chat)."""


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
    """(base, parts, oldest first) for the chat's checkpoint `newest`: the newest
    rewrite of the summary is the first part (`whole`), each part appended since
    follows; the base is None but when `MAX_CHECKPOINTS` were walked before the
    first part or rewrite was reached (what they had is then the base). A
    checkpoint of the diary alone (a diary compression: the same text) adds no part."""
    recaps: list[Recap] = []
    current = newest
    for _ in range(MAX_CHECKPOINTS):
        before = await store.memory.checkpoint_before(current)
        previous = before.content if before else ""
        if before is not None and previous.strip() == current.content.strip():
            current = before
            continue
        part = appended_part(previous, current.content)
        if part is None:  # a rewrite
            recaps.append(Recap(current.anchor_id, current.content.strip(), whole=True))
            return None, recaps[::-1]
        recaps.append(Recap(current.anchor_id, part))
        if before is None:
            return None, recaps[::-1]
        current = before
    return current, recaps[::-1]


async def with_timeline(store: Store, state: MemoryState) -> MemoryState:
    """`state` with its summary's timeline (MemoryState.timeline): the chat's
    summary, not a scene speaker's own."""
    summary = state.summary
    if summary is None or summary.owner is not None:
        return state
    base, recaps = await summary_timeline(store, summary)
    if not recaps:
        return state
    return replace(state, timeline=SummaryTimeline(base=base.content if base else "", recaps=tuple(recaps)))
