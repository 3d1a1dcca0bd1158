"""Memories found by meaning, not only by words: every message of a chat that
has left the window gets a static vector (llm/static_embeddings.py), kept in
memory for the session, and each turn the messages nearest the latest ones
join the word matches as candidates for the passages (memory/passages.py).
"What did I call my bike?" finds "we finally named our bicycle Rocket",
which shares no word with it.

The vectors are made as messages leave the window (a turn adds one or two;
a session's first turn in a long chat makes them all, in a thread: about
0.4 s at 10,000 messages, benchmarks/passages.py). A message in the window is never embedded: the
reply there may still be streaming."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from omoide.llm import static_embeddings

if TYPE_CHECKING:
    from omoide.llm.static_embeddings import Matrix
    from omoide.store import Store

CATCH_UP_BATCH = 2048
"""Messages read and embedded at a time while catching up."""
FLOOR = 0.15
"""The least cosine a message needs to come to mind by meaning alone: below it, nothing is near."""


class MeaningIndex:
    """The vectors of one chat's messages (every branch: the path is checked after, as for words)."""

    def __init__(self, store: Store, chat_id: int) -> None:
        self.store = store
        self.chat_id = chat_id
        self._ids: list[int] = []
        self._blocks: list[Matrix] = []
        self._matrix: Matrix | None = None
        self._lock = asyncio.Lock()

    @property
    def size(self) -> int:
        return len(self._ids)

    async def _catch_up(self, before: int) -> None:
        """Embed the messages older than `before` not embedded yet."""
        while True:
            after = self._ids[-1] if self._ids else 0
            found = await self.store.recall.said_between(self.chat_id, after, before, limit=CATCH_UP_BATCH)
            if not found:
                return
            block = await asyncio.to_thread(static_embeddings.vectors, [text for _, text in found])
            if block is None:
                return
            self._ids += [message_id for message_id, _ in found]
            self._blocks.append(block)
            self._matrix = None
            if len(found) < CATCH_UP_BATCH:
                return

    async def nearest(self, query: str, *, before: int, limit: int) -> list[tuple[int, float]]:
        """The at most `limit` messages older than message `before` nearest to
        `query` (cosine at least `FLOOR`), nearest first: (id, cosine)."""
        async with self._lock:  # two speakers of a scene may ask at once: one catch-up
            await self._catch_up(before)
        if not self._ids or limit <= 0:
            return []
        import numpy as np

        if self._matrix is None:
            self._matrix = np.concatenate(self._blocks) if len(self._blocks) > 1 else self._blocks[0]
            self._blocks = [self._matrix]
        asked = await asyncio.to_thread(static_embeddings.vectors, [query])
        if asked is None:
            return []
        ids = np.asarray(self._ids)
        closeness = self._matrix @ asked[0]
        closeness[ids >= before] = -1.0  # embedded on another branch, now in (or past) this window
        count = min(limit, len(self._ids))
        best = np.argpartition(-closeness, count - 1)[:count]
        ranked = sorted(((int(ids[i]), float(closeness[i])) for i in best), key=lambda pair: -pair[1])
        return [(message_id, value) for message_id, value in ranked if value >= FLOOR]
