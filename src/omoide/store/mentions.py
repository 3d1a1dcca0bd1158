"""Mentions: a memory brought up again at a message, anchored to the tree.

Like diary entries, mentions link backwards along their path and each message
row carries the newest one above it, so the mentions in force at a head are
read by one walk over mentions (never over the messages)."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping

from omoide.domain.chat import Mention
from omoide.store import rows
from omoide.store.rows import ts
from omoide.store.db import Database
from omoide.store.paths import NEWEST_MENTION

MENTION_CHAIN_CAP = 5000
"""Most mentioning messages read at a head, newest first."""
_MADE_AT = {"diary": "SELECT min(message_id) AS x FROM diary_entries WHERE id IN ({})",
            "memo": "SELECT min(anchor_id) AS x FROM memos WHERE id IN ({})"}
"""Per kind of mention, the oldest message the memories of some ids were made at."""


class MentionRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def add(self, chat_id: int, message_id: int, kind: str, memory_ids: Iterable[int]) -> list[Mention]:
        """Record that `message_id` brings up each memory: one row per message and
        kind, so a regenerated reply's prompt does not count the mentions twice."""
        ids = sorted(set(memory_ids))
        if not ids:
            return []
        stamp = self.db.now_iso()
        async with self.db.write() as conn:
            cur = await conn.execute(
                f"""INSERT OR IGNORE INTO memory_mentions (chat_id, message_id, prev_id, kind, memory_ids, created_at)
                    SELECT ?, m.id, {NEWEST_MENTION}, ?, ?, ? FROM messages m WHERE m.id = ?""",
                (chat_id, kind, ",".join(map(str, ids)), stamp, message_id),
            )
            row_id = cur.lastrowid if cur.rowcount else None
        if row_id is None:
            return []
        return [Mention(row_id, kind, memory_id, message_id, ts(stamp)) for memory_id in ids]

    async def at(self, head_id: int, *, limit: int = MENTION_CHAIN_CAP,
                 only: Mapping[str, Collection[int]] | None = None) -> list[Mention]:
        """The mentions on the path to `head_id`, oldest first; with `only`, those of
        the memories it names by kind (a long chat holds thousands of the others).
        A memory is mentioned only after the message it was made at, and a message's
        id is above its parent's, so with `only` the walk stops below the oldest of
        those messages."""
        if only is not None and not any(only.values()):
            return []
        floor = _oldest_message(only) if only is not None else "0"
        result = await self.db.all(
            f"""WITH RECURSIVE chain(id, prev_id, n) AS (
                   SELECT id, prev_id, 1 FROM memory_mentions
                   WHERE id = (SELECT {NEWEST_MENTION} FROM messages m WHERE m.id = :head)
                   UNION ALL
                   SELECT c.id, c.prev_id, chain.n + 1 FROM memory_mentions c JOIN chain ON c.id = chain.prev_id
                   WHERE chain.n < :limit AND c.message_id >= {floor}
               ) SELECT c.* FROM chain JOIN memory_mentions c ON c.id = chain.id ORDER BY chain.n DESC""",
            {"head": head_id, "limit": limit},
        )
        if only is None:
            return [mention for r in result for mention in rows.mentions(r)]
        # Most rows name none of the memories asked about: told apart by the ids as
        # stored (decimal, comma-separated), before anything is parsed.
        wanted = {kind: {str(i): int(i) for i in ids} for kind, ids in only.items()}
        found: list[Mention] = []
        for r in result:
            asked = wanted.get(r["kind"])
            named = [asked[i] for i in r["memory_ids"].split(",") if i in asked] if asked else None
            if named:
                moment = ts(r["created_at"])
                found += [Mention(r["id"], r["kind"], i, r["message_id"], moment) for i in named]
        return found


def _oldest_message(memories: Mapping[str, Collection[int]]) -> str:
    """SQL for the oldest message any of `memories` (by kind) was made at; 0 when a
    kind is one this does not know."""
    if any(kind not in _MADE_AT for kind, ids in memories.items() if ids):
        return "0"
    parts = [_MADE_AT[kind].format(",".join(str(int(i)) for i in ids)) for kind, ids in memories.items() if ids]
    return f"coalesce((SELECT min(x) FROM ({' UNION ALL '.join(parts)})), 0)"
