"""Knowledge boundaries: what of a chat's memory one character may read
(domain/witness.py says who witnessed what).

A message is read only by those present when it was said; a diary entry by
its owner (or, written for everyone, by those present when it was written); a
memo or summary of the chat only by those who witnessed every message it was
made from. What a character missed reaches it only when someone tells it, in
its presence; its own summary and memos (`owner`) cover what it witnessed
when the chat's do not (memory/scene_memory.py makes them).
"""

from __future__ import annotations

from collections.abc import Sequence

from omoide.domain.chat import DiaryEntry, Memo, Message, Summary
from omoide.domain.witness import Reader
from omoide.store import Store


def witnessed(messages: Sequence[Message], reader: Reader) -> list[Message]:
    return [m for m in messages if reader.saw(m.depth)]


def memo_readable(memo: Memo, reader: Reader) -> bool:
    if memo.owner is not None:
        return memo.owner == reader.key
    if memo.first_depth is None:  # written by you at a head: for whoever was there
        return reader.saw(memo.anchor_depth)
    return reader.saw_all(memo.first_depth, memo.anchor_depth)


async def readable_diary(store: Store, entries: Sequence[DiaryEntry], reader: Reader) -> list[DiaryEntry]:
    depths = await store.messages.depths([e.message_id for e in entries])
    return [e for e in entries if reader.reads(e.owner, depths.get(e.message_id, -1))]


async def summary_readable(store: Store, summary: Summary, reader: Reader) -> bool:
    if summary.owner is not None:
        return summary.owner == reader.key
    if summary.covers_to_id is None:
        return True  # a checkpoint of the diary alone: it covers no message
    depth = (await store.messages.depths([summary.covers_to_id])).get(summary.covers_to_id)
    return depth is not None and reader.saw_all(0, depth)


async def readable_summary(store: Store, head_id: int, reader: Reader, newest: Summary | None) -> Summary | None:
    """The newest summary on the path to `head_id` that `reader` may read: the
    chat's newest (`newest`) when it witnessed all it covers, else its own or an
    older one of the chat's that covers only what it witnessed."""
    if newest is None or await summary_readable(store, newest, reader):
        return newest
    for summary in await store.memory.summaries_on_path(head_id, reader.key):
        if await summary_readable(store, summary, reader):
            return summary
    return None
