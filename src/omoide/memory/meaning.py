"""Memories found by meaning, not only by words: every message of a chat that
has left the window gets a static vector (llm/static_embeddings.py), kept in
SQLite with the message, and each turn the messages nearest the latest ones
join the word matches as candidates for the passages (memory/passages.py).
"What did I call my bike?" finds "we finally named our bicycle Rocket",
which shares no word with it.

The vectors are made as messages leave the window (a turn adds one or two)
and kept with the messages, so a session's first turn in a long chat reads
them instead of making them all again (benchmarks/passages.py). A message
in the window is never embedded: the reply there may still be streaming.

A turn catches up for a bounded while only (`FOREGROUND_STEPS` of at most
`FOREGROUND_EMBED` messages made): the rest (a long chat's stored vectors,
an imported chat that has none) is read and made in the background, and the
turns meanwhile find by meaning among what is read so far (the words find
everything from the first turn). So the first reply in a 100,000-message
chat does not wait for 100,000 vectors (benchmarks/chat_speed.py)."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from omoide.llm import static_embeddings

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from omoide.llm.static_embeddings import Matrix
    from omoide.store import Store

    Ids = npt.NDArray[np.int64]

VECTORS = "wordllama-256"
"""What the kept vectors are (store.vectors): another source's would be made anew."""
CATCH_UP_BATCH = 2048
"""Messages read and embedded at a time while catching up."""
FOREGROUND_STEPS = 2
"""Steps of catching up a turn waits for (each reads kept vectors or makes new ones); then the rest goes on in the background."""
FOREGROUND_EMBED = 256
"""The most messages a turn itself embeds in one step (some 0.1 s on two cores)."""
FLOOR = 0.15
"""The least cosine a message needs to come to mind by meaning alone: below it, nothing is near."""


class MeaningIndex:
    """The vectors of one chat's messages (every branch: the path is checked after, as for words)."""

    def __init__(self, store: Store, chat_id: int) -> None:
        self.store = store
        self.chat_id = chat_id
        self._count = 0
        self._ids: Ids | None = None
        self._matrix: Matrix | None = None
        """Rows `[:_count]` are the vectors of `_ids[:_count]`; the rest is room to grow, doubled when
        full, so a turn that adds a message copies nothing."""
        self._lock = asyncio.Lock()
        self._behind: asyncio.Task[None] | None = None
        """Catching up in the background, when a turn's own steps were not enough."""

    def _add(self, ids: list[int], block: Matrix) -> None:
        import numpy as np

        needed = self._count + len(ids)
        if self._matrix is None or self._ids is None or needed > len(self._ids):
            room = max(needed, 2 * self._count, CATCH_UP_BATCH)
            matrix, grown = np.zeros((room, block.shape[1]), dtype=np.float32), np.zeros(room, dtype=np.int64)
            if self._matrix is not None and self._ids is not None:
                matrix[: self._count], grown[: self._count] = self._matrix[: self._count], self._ids[: self._count]
            self._matrix, self._ids = matrix, grown
        self._matrix[self._count : needed], self._ids[self._count : needed] = block, ids
        self._count = needed

    async def _step(self, before: int, most: int) -> bool:
        """One step of catching up with the messages older than `before`: read a batch
        of kept vectors, or embed (and keep) at most `most` messages that have none yet.
        Whether there was anything to do."""
        import numpy as np

        after = self._last()
        kept = await self.store.vectors.after(self.chat_id, VECTORS, after, before, limit=CATCH_UP_BATCH)
        found = await self.store.recall.said_between(self.chat_id, after, min(before, kept[0][0]) if kept else before,
                                                     limit=most)
        if found:  # messages with no kept vector before the next kept one: made now, and kept
            block = await asyncio.to_thread(static_embeddings.vectors, [text for _, text in found])
            if block is None:
                return False
            ids = [message_id for message_id, _ in found]
            self._add(ids, block)
            await self.store.vectors.keep(self.chat_id, VECTORS, [(i, row.tobytes()) for i, row in zip(ids, block)])
            return True
        if not kept:
            return False
        self._add([message_id for message_id, _ in kept],
                  np.stack([np.frombuffer(vector, dtype=np.float32) for _, vector in kept]))
        return True

    async def _catch_up(self, before: int) -> None:
        """Catch up for `FOREGROUND_STEPS` steps; what is left goes on in the background."""
        if self._behind is not None and not self._behind.done():
            return  # the turns meanwhile read what is caught up so far
        async with self._lock:
            for _ in range(FOREGROUND_STEPS):
                if not await self._step(before, FOREGROUND_EMBED):
                    return
        self._behind = asyncio.create_task(self._catch_up_rest(before))

    async def _catch_up_rest(self, before: int) -> None:
        try:
            async with self._lock:
                while await self._step(before, CATCH_UP_BATCH):
                    pass
        except asyncio.CancelledError:
            raise
        except Exception:  # noqa: BLE001 - a lost vector is found again next session; the chat goes on
            logging.getLogger(__name__).exception("catching up the message vectors failed")

    async def settled(self) -> None:
        """Until catching up in the background (if any) has ended."""
        if self._behind is not None:
            await asyncio.gather(self._behind, return_exceptions=True)

    async def aclose(self) -> None:
        """Stop catching up (what is made is kept; the rest is made next session)."""
        if self._behind is not None:
            self._behind.cancel()
            await asyncio.gather(self._behind, return_exceptions=True)

    def _last(self) -> int:
        return int(self._ids[self._count - 1]) if self._ids is not None and self._count else 0

    async def nearest(self, query: str, *, before: int, limit: int) -> list[tuple[int, float]]:
        """The at most `limit` messages older than message `before` nearest to
        `query` (cosine at least `FLOOR`), nearest first: (id, cosine)."""
        await self._catch_up(before)
        # What is caught up now: the background may add rows while the query is embedded.
        matrix, ids, count = self._matrix, self._ids, self._count
        if matrix is None or ids is None or not count or limit <= 0:
            return []
        import numpy as np

        asked = await asyncio.to_thread(static_embeddings.vectors, [query])
        if asked is None:
            return []
        ids = ids[:count]
        closeness = matrix[:count] @ asked[0]
        closeness[ids >= before] = -1.0  # embedded on another branch, now in (or past) this window
        count = min(limit, count)
        best = np.argpartition(-closeness, count - 1)[:count]
        ranked = sorted(((int(ids[i]), float(closeness[i])) for i in best), key=lambda pair: -pair[1])
        return [(message_id, value) for message_id, value in ranked if value >= FLOOR]
