"""Lore timers: when an entry with a sticky or a cooldown fired, anchored at the
reply its prompt was for (see characters/lore_state.py), and counts along a path."""

from __future__ import annotations

from collections.abc import Sequence

from omoide.store.connection import now_iso
from omoide.store.db import Database
from omoide.store.paths import walk_up


class LoreRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def record(self, chat_id: int, message_id: int, chat_length: int, entry_keys: Sequence[str]) -> None:
        if not entry_keys:
            return
        stamp = now_iso()
        async with self.db.write() as conn:
            await conn.executemany(
                "INSERT OR IGNORE INTO lore_timers (chat_id, message_id, entry_key, chat_length, created_at) VALUES (?, ?, ?, ?, ?)",
                [(chat_id, message_id, key, chat_length, stamp) for key in dict.fromkeys(entry_keys)],
            )

    async def on_path(self, head_id: int, since: int) -> list[tuple[str, int]]:
        """(entry key, chat length) of the records anchored on the path to
        `head_id` at a depth of `since` or more, oldest first."""
        cte = walk_up("up", start="?", until="up.depth > ?")
        rows = await self.db.all(
            f"WITH RECURSIVE {cte} SELECT t.entry_key, t.chat_length FROM lore_timers t JOIN up ON t.message_id = up.id "
            "ORDER BY t.chat_length",
            (head_id, max(since, 0)),
        )
        return [(str(r[0]), int(r[1])) for r in rows]

    async def count_on_path(self, head_id: int, role: str) -> int:
        """How many messages of `role` lie on the path from the root to `head_id`."""
        cte = walk_up("up", start="?", columns="id, parent_id, depth, role")
        row = await self.db.one(f"WITH RECURSIVE {cte} SELECT count(*) FROM up WHERE role = ?", (head_id, role))
        return int(row[0]) if row else 0
