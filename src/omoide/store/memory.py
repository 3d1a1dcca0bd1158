"""Chat memory anchored to the message tree: summaries (memory checkpoints) and
diary entries, and the memory state in force at any head."""

from __future__ import annotations

from dataclasses import replace
from types import EllipsisType

from omoide.domain.chat import DiaryAuthor, DiaryEntry, MemoryState, Summary
from omoide.errors import NotFound
from omoide.store import rows
from omoide.store.db import Database
from omoide.store.messages import MessageRepository
from omoide.store.paths import NEWEST_DIARY, POINTERS, walk_up

WINDOW_CAP = 2000
"""Most messages read for the raw window, however long compression has been failing."""
DIARY_CHAIN_CAP = 10_000
MEMORY_DIARY_CAP = 100
"""Diary entries read per turn: more than the prompt's 50 lines need, and more than
compression lets accumulate, unless compression has been failing for a long time."""


STATE_CACHE_SIZE = 8
"""Memory states kept (a turn reads its head's several times; a scene, each speaker's)."""
_StateKey = tuple[int, int, int | None, int | None]


class MemoryRepository:
    def __init__(self, db: Database, messages: MessageRepository) -> None:
        self.db = db
        self.messages = messages
        self._states: dict[_StateKey, MemoryState] = {}
        self._states_as_of: tuple[int, int, int] | None = None
        """(this connection's writes and rows changed, the file's version from other
        connections) when the kept states were read: any write since, here or in
        another window, drops them all."""

    async def pointers(self, message_id: int) -> tuple[int | None, int | None]:
        """The newest summary and diary entry in force at `message_id`."""
        row = await self.db.one(f"SELECT {POINTERS} FROM messages m WHERE m.id = ?", (message_id,))
        if row is None:
            raise NotFound(f"There is no message #{message_id}.", "Reopen the chat; its head may have been moved by another window.")
        return row[0], row[1]

    async def add_diary_entry(
        self, chat_id: int, message_id: int, content: str, author: DiaryAuthor, *,
        importance: int | None = None, emotion: str | None = None, origin_id: int | None = None, created_at: str | None = None,
        owner: str | None | EllipsisType = ...,
    ) -> DiaryEntry:
        """Record a diary entry at `message_id`; it exists on that message's subtree.
        `created_at` keeps an older date (an entry kept through a compression)."""
        stamp = created_at or self.db.now_iso()
        async with self.db.write() as conn:
            async with conn.execute(f"SELECT m.chat_id, {NEWEST_DIARY}, m.speaker, m.role FROM messages m WHERE m.id = ?",
                                    (message_id,)) as cur:
                row = await cur.fetchone()
            if row is None or row[0] != chat_id:
                raise NotFound(f"Message #{message_id} is not in chat #{chat_id}.", "Reopen the chat and try again.")
            # In a scene, what a character writes goes to its own diary: the speaker of the reply it wrote at.
            # (`owner` given: a compression writing a character's block or keeping its entries.)
            if owner is ...:
                owner = row[2] if author is DiaryAuthor.CHARACTER and row[3] == "assistant" else None
            cur = await conn.execute(
                """INSERT INTO diary_entries (chat_id, message_id, prev_id, author, content, created_at, importance, emotion,
                                              origin_id, owner)
                   VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
                (chat_id, message_id, row[1], str(author), content, stamp, importance, emotion, origin_id, owner),
            )
            entry_id = cur.lastrowid
        row = await self.db.one("SELECT * FROM diary_entries WHERE id = ?", (entry_id,))
        assert row is not None
        return rows.diary_entry(row)

    async def add_summary(self, chat_id: int, anchor_id: int, *, content: str, covers_to_id: int | None, diary_to_id: int | None,
                          owner: str | None = None) -> Summary:
        """A memory checkpoint at `anchor_id`; with `owner`, that character's own
        summary (a scene), which never becomes the chat's checkpoint."""
        stamp = self.db.now_iso()
        async with self.db.write() as conn:
            cur = await conn.execute(
                """INSERT INTO summaries (chat_id, anchor_id, covers_to_id, diary_to_id, content, created_at, owner)
                   VALUES (?, ?, ?, ?, ?, ?, ?)""",
                (chat_id, anchor_id, covers_to_id, diary_to_id, content, stamp, owner),
            )
            summary_id = cur.lastrowid
        summary = await self._summary(summary_id)
        assert summary is not None
        return summary

    async def _summary_and_diary(self, head_id: int) -> tuple[Summary | None, int | None]:
        """The summary in force at `head_id` and the newest diary entry's id: one
        statement for what `pointers` and `_summary` read in two."""
        row = await self.db.one(
            f"""WITH p(summary_id, diary_id, mention_id) AS (SELECT {POINTERS} FROM messages m WHERE m.id = ?)
                SELECT s.*, p.diary_id AS newest_diary_id FROM p LEFT JOIN summaries s ON s.id = p.summary_id""",
            (head_id,),
        )
        if row is None:
            raise NotFound(f"There is no message #{head_id}.", "Reopen the chat; its head may have been moved by another window.")
        return (rows.summary(row) if row["id"] is not None else None), row["newest_diary_id"]

    async def _summary(self, summary_id: int | None) -> Summary | None:
        if summary_id is None:
            return None
        row = await self.db.one("SELECT * FROM summaries WHERE id = ?", (summary_id,))
        return rows.summary(row) if row else None

    async def summaries_on_path(self, head_id: int, owner: str, *, cap: int = WINDOW_CAP) -> list[Summary]:
        """The chat's summaries and `owner`'s own anchored on the path to `head_id`
        (its last `cap` messages), newest first: where a character who cannot read
        the chat's newest summary finds the newest one it can."""
        cte = walk_up("up", start=":head", until="up.depth > (SELECT depth FROM messages WHERE id = :head) - :cap + 1")
        result = await self.db.all(
            f"""WITH RECURSIVE {cte}
                SELECT s.* FROM up JOIN summaries s ON s.anchor_id = up.id
                WHERE s.owner IS NULL OR s.owner = :owner ORDER BY up.depth DESC, s.id DESC""",
            {"head": head_id, "owner": owner, "cap": cap},
        )
        return [rows.summary(r) for r in result]

    async def checkpoint_before(self, summary: Summary) -> Summary | None:
        """The chat's checkpoint that was in force where `summary` (one of the
        chat's) was recorded: an earlier one at the same message, else the one
        in force at the message's parent."""
        row = await self.db.one(
            "SELECT * FROM summaries WHERE anchor_id = ? AND id < ? AND owner IS NULL ORDER BY id DESC LIMIT 1",
            (summary.anchor_id, summary.id),
        )
        if row is not None:
            return rows.summary(row)
        anchor = await self.messages.get(summary.anchor_id)
        return await self.summary_at(anchor.parent_id) if anchor.parent_id is not None else None

    async def summary_at(self, head_id: int) -> Summary | None:
        summary_id, _ = await self.pointers(head_id)
        return await self._summary(summary_id)

    async def diary_chain(self, newest_id: int | None, *, stop_at: int | None = None, limit: int = DIARY_CHAIN_CAP) -> list[DiaryEntry]:
        """Entries linked backwards from `newest_id`, oldest first. The walk stops
        after a compressed entry (it stands for everything before it; in a group
        scene one compression writes a block per character at one message, and
        the walk takes them all), before
        `stop_at`, or after `limit` entries."""
        if newest_id is None or newest_id == stop_at:
            return []
        result = await self.db.all(
            """WITH RECURSIVE chain(id, prev_id, author, message_id, n) AS (
                   SELECT id, prev_id, author, message_id, 1 FROM diary_entries WHERE id = :newest
                   UNION ALL
                   SELECT d.id, d.prev_id, d.author, d.message_id, chain.n + 1 FROM diary_entries d JOIN chain ON d.id = chain.prev_id
                   WHERE (chain.author != 'compression' OR (d.author = 'compression' AND d.message_id = chain.message_id))
                     AND d.id IS NOT :stop AND chain.n < :limit
               ) SELECT d.* FROM chain JOIN diary_entries d ON d.id = chain.id ORDER BY chain.n DESC""",
            {"newest": newest_id, "stop": stop_at, "limit": limit},
        )
        return [rows.diary_entry(r) for r in result]

    async def diary_at(self, head_id: int, *, limit: int = DIARY_CHAIN_CAP) -> list[DiaryEntry]:
        _, diary_id = await self.pointers(head_id)
        return await self.diary_chain(diary_id, limit=limit)

    async def state(self, head_id: int, *, diary_limit: int = MEMORY_DIARY_CAP, window_from: int | None = None,
                    window_limit: int | None = None) -> MemoryState:
        """The summary, diary and raw window in force at `head_id`, read via the
        pointers: cost grows with the window and the diary, never with history.
        `window_from` (a depth) starts the window there instead of after the summary;
        `window_limit` keeps only that many of its newest messages.

        A turn reads the state at its head several times (the prompt, then the
        memory work after the reply): it is read once and kept until anything is
        written to the database, by this process or another (a summary, a memo,
        a diary entry, a message, an edit, a head moved), so a state is never stale."""
        as_of = (*self.db.version(), await self._data_version())
        if as_of != self._states_as_of:
            self._states.clear()
            self._states_as_of = as_of
        key = (head_id, diary_limit, window_from, window_limit)
        if (kept := self._states.get(key)) is None:
            kept = await self._read_state(head_id, diary_limit=diary_limit, window_from=window_from, window_limit=window_limit)
            if self.db.version() == as_of[:2] and self._states_as_of == as_of:  # nothing written here while it was read
                while len(self._states) >= STATE_CACHE_SIZE:
                    del self._states[next(iter(self._states))]
                self._states[key] = kept
        # The caller gets lists of its own: what it does with them never reaches the kept state.
        return replace(kept, stable_diary=list(kept.stable_diary), new_diary=list(kept.new_diary), window=list(kept.window))

    async def _data_version(self) -> int:
        """Changes when another connection (another window, `omoide say`) commits."""
        row = await self.db.one("PRAGMA data_version")
        return int(row[0]) if row else 0

    async def _read_state(self, head_id: int, *, diary_limit: int, window_from: int | None,
                          window_limit: int | None) -> MemoryState:
        summary, diary_id = await self._summary_and_diary(head_id)
        fold = summary.diary_to_id if summary else None
        if fold is None:
            stable_diary, new_diary = [], await self.diary_chain(diary_id, limit=diary_limit)
        else:
            new_diary = await self.diary_chain(diary_id, stop_at=fold, limit=diary_limit)
            stable_diary = await self.diary_chain(fold, limit=diary_limit)
        cap = min(WINDOW_CAP, window_limit) if window_limit is not None else WINDOW_CAP
        if window_from is not None:
            head = await self.messages.get(head_id)
            window = await self.messages.path(head_id, limit=min(cap, max(head.depth - window_from + 1, 1)))
        else:
            window = await self.messages.path(head_id, limit=cap, stop_before=summary.covers_to_id if summary else None)
        return MemoryState(summary=summary, stable_diary=stable_diary, new_diary=new_diary, window=window)
