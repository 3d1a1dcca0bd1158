"""Mentions: a memory brought up again at a message, anchored to the tree.

Like diary entries, mentions link backwards along their path and each message
row carries the newest one above it, so the mentions in force at a head are
read by one walk over mentions (never over the messages)."""

from __future__ import annotations

from collections.abc import Iterable

from omoide.domain import Mention
from omoide.store import rows
from omoide.store.connection import now_iso
from omoide.store.db import Database
from omoide.store.paths import NEWEST_MENTION

MENTION_CHAIN_CAP = 5000
"""Most mentions read at a head, newest first."""


class MentionRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def add(self, chat_id: int, message_id: int, kind: str, memory_ids: Iterable[int]) -> list[Mention]:
        """Record that `message_id` brings up each memory; a mention already
        recorded for that message (a regenerated reply's prompt) is not counted twice."""
        ids = sorted(set(memory_ids))
        if not ids:
            return []
        stamp = now_iso()
        async with self.db.write() as conn:
            for memory_id in ids:
                async with conn.execute(f"SELECT {NEWEST_MENTION} FROM messages m WHERE m.id = ?", (message_id,)) as cur:
                    row = await cur.fetchone()
                await conn.execute(
                    """INSERT OR IGNORE INTO memory_mentions (chat_id, message_id, prev_id, kind, memory_id, created_at)
                       VALUES (?, ?, ?, ?, ?, ?)""",
                    (chat_id, message_id, row[0] if row else None, kind, memory_id, stamp),
                )
        result = await self.db.all(
            f"SELECT * FROM memory_mentions WHERE message_id = ? AND kind = ? AND memory_id IN ({','.join('?' * len(ids))}) ORDER BY id",
            (message_id, kind, *ids),
        )
        return [rows.mention(r) for r in result]

    async def at(self, head_id: int, *, limit: int = MENTION_CHAIN_CAP) -> list[Mention]:
        """The mentions on the path to `head_id`, oldest first."""
        result = await self.db.all(
            f"""WITH RECURSIVE chain(id, prev_id, n) AS (
                   SELECT id, prev_id, 1 FROM memory_mentions
                   WHERE id = (SELECT {NEWEST_MENTION} FROM messages m WHERE m.id = :head)
                   UNION ALL
                   SELECT c.id, c.prev_id, chain.n + 1 FROM memory_mentions c JOIN chain ON c.id = chain.prev_id
                   WHERE chain.n < :limit
               ) SELECT c.* FROM chain JOIN memory_mentions c ON c.id = chain.id ORDER BY chain.n DESC""",
            {"head": head_id, "limit": limit},
        )
        return [rows.mention(r) for r in result]
