"""Message vectors kept with the messages (migration 0025): raw little-endian
float32 bytes, read back a block at a time."""

from __future__ import annotations

from collections.abc import Sequence

from omoide.store.db import Database


class VectorRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def after(self, chat_id: int, model: str, after: int, before: int, *, limit: int) -> list[tuple[int, bytes]]:
        """The chat's kept vectors of `model` for messages with ids after `after` and before `before`, by id."""
        found = await self.db.all(
            "SELECT message_id, vector FROM message_vectors WHERE chat_id = ? AND model = ? AND message_id > ? "
            "AND message_id < ? ORDER BY message_id LIMIT ?", (chat_id, model, after, before, limit))
        return [(int(r[0]), bytes(r[1])) for r in found]

    async def keep(self, chat_id: int, model: str, rows: Sequence[tuple[int, bytes]]) -> None:
        """Keep the vectors of `rows` (message id, bytes); a message's vector of another model is replaced."""
        if not rows:
            return
        async with self.db.write() as conn:
            await conn.executemany(
                "INSERT OR REPLACE INTO message_vectors (message_id, chat_id, model, vector) VALUES (?, ?, ?, ?)",
                [(message_id, chat_id, model, vector) for message_id, vector in rows])
