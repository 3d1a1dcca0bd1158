"""The message tree: adding and updating messages, and walking paths in it.

Nothing here deletes or moves a message. Each inserted row copies, from its
parent, the pointers to the newest summary and diary entry on its path.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import aiosqlite

from omoide.domain.chat import Message, MessageStatus, Role
from omoide.errors import HeadMoved, NotFound
from omoide.store import rows
from omoide.store.db import Database
from omoide.store.paths import POINTERS, walk_up


@dataclass(frozen=True, slots=True)
class ImportNode:
    parent: int | None
    """Index of the parent in the import list, or None for a root."""
    role: Role
    content: str
    created_at: str | None = None
    status: MessageStatus = MessageStatus.COMPLETE
    speaker: str | None = None
    """In a group scene: the character (id) who wrote it."""


@dataclass(frozen=True, slots=True)
class SearchHit:
    message: Message
    marked: str
    """The matching words between rows.MATCH_START and rows.MATCH_END, with a little context."""

    @property
    def snippet(self) -> str:
        """The matching words in [brackets], with a little context."""
        return rows.bracketed(self.marked)


_SELECT = f"SELECT {rows.MESSAGE_COLUMNS} FROM messages"
ANY_HEAD = object()
"""`add(expected_head=...)` default: append whatever the chat's head is."""
_NO_LIMIT = 1_000_000_000


async def insert_message(
    conn: aiosqlite.Connection,
    chat_id: int,
    parent_id: int | None,
    role: Role,
    content: str,
    status: MessageStatus,
    tool_calls: list[dict[str, Any]] | None,
    tool_call_id: str | None,
    stamp: str,
    speaker: str | None = None,
    stage: str | None = None,
) -> int:
    """Insert one row inside an open write transaction; returns its id."""
    if parent_id is None:
        depth, summary_id, diary_id, mention_id = 0, None, None, None
    else:
        found = await conn.execute_fetchall(f"SELECT m.depth, m.chat_id, {POINTERS} FROM messages m WHERE m.id = ?", (parent_id,))
        parent = next(iter(found), None)  # (one trip to aiosqlite's thread; a cursor takes three)
        if parent is None or parent[1] != chat_id:
            raise NotFound(f"The parent message #{parent_id} is not in chat #{chat_id}.", "Reopen the chat and try again.")
        depth, summary_id, diary_id, mention_id = parent[0] + 1, parent[2], parent[3], parent[4]
    cur = await conn.execute(
        """INSERT INTO messages (chat_id, parent_id, role, content, tool_calls, tool_call_id,
                                 created_at, status, depth, summary_id, diary_id, mention_id, speaker, stage)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
        (
            chat_id, parent_id, str(role), content,
            json.dumps(tool_calls) if tool_calls else None, tool_call_id,
            stamp, str(status), depth, summary_id, diary_id, mention_id, speaker, stage,
        ),
    )
    assert cur.lastrowid is not None
    return cur.lastrowid


class MessageRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def add(
        self,
        chat_id: int,
        parent_id: int | None,
        role: Role,
        content: str,
        *,
        status: MessageStatus = MessageStatus.COMPLETE,
        tool_calls: list[dict[str, Any]] | None = None,
        tool_call_id: str | None = None,
        move_head: bool = True,
        expected_head: int | None | object = ANY_HEAD,
        speaker: str | None = None,
        stage: str | None = None,
    ) -> Message:
        """Append a message under `parent_id` (and make it the head, by default).
        With `expected_head`, raise HeadMoved instead if the chat's head is not
        that message when the write lock is held (another process wrote first)."""
        stamp = self.db.now_iso()
        async with self.db.write() as conn:
            if expected_head is not ANY_HEAD:
                row = next(iter(await conn.execute_fetchall("SELECT head_id FROM chats WHERE id = ?", (chat_id,))), None)
                if row is not None and row[0] != expected_head:
                    raise HeadMoved(
                        f"Chat #{chat_id} moved on in another window.",
                        "Your message is kept; it continues from the newest message there.", head_id=row[0],
                    )
            msg_id = await insert_message(conn, chat_id, parent_id, role, content, status, tool_calls, tool_call_id, stamp,
                                          speaker, stage)
            if move_head:
                await conn.execute("UPDATE chats SET head_id = ?, updated_at = ? WHERE id = ?", (msg_id, stamp, chat_id))
        return await self.get(msg_id)

    async def update(self, message_id: int, *, content: str | None = None, status: MessageStatus | None = None,
                     tool_calls: list[dict[str, Any]] | None = None, error: str | None = None) -> Message:
        """Fill in a reply as it streams or when it ends (`error`: why it failed). Only replies are updated."""
        sets: list[str] = []
        params: list[object] = []
        if error is not None:
            sets.append("error = ?")
            params.append(error)
        if content is not None:
            sets.append("content = ?")
            params.append(content)
        if status is not None:
            sets.append("status = ?")
            params.append(str(status))
        if tool_calls is not None:
            sets.append("tool_calls = ?")
            params.append(json.dumps(tool_calls))
        if sets:
            async with self.db.write() as conn:
                await conn.execute(f"UPDATE messages SET {', '.join(sets)} WHERE id = ?", (*params, message_id))
        return await self.get(message_id)

    async def get(self, message_id: int) -> Message:
        # SQLite integers are 64-bit: a bigger id exists nowhere (and would raise OverflowError).
        row = await self.db.one(f"{_SELECT} WHERE id = ?", (message_id,)) if 0 < message_id < 2**63 else None
        if row is None:
            raise NotFound(f"There is no message #{message_id}.", "Message numbers are shown by /search and `omoide export -f tree`.")
        return rows.message(row)

    async def depths(self, message_ids: Sequence[int]) -> dict[int, int]:
        """Message id -> depth, for the ids that exist."""
        ids = sorted({int(i) for i in message_ids})
        if not ids:
            return {}
        result = await self.db.all(f"SELECT id, depth FROM messages WHERE id IN ({','.join('?' * len(ids))})", ids)
        return {r[0]: r[1] for r in result}

    async def tree(self, chat_id: int) -> list[Message]:
        """Every message of a chat, parents before children."""
        return [rows.message(r) for r in await self.db.all(f"{_SELECT} WHERE chat_id = ? ORDER BY id", (chat_id,))]

    async def children(self, message_id: int) -> list[Message]:
        return [rows.message(r) for r in await self.db.all(f"{_SELECT} WHERE parent_id = ? ORDER BY id", (message_id,))]

    async def roots(self, chat_id: int) -> list[Message]:
        result = await self.db.all(f"{_SELECT} WHERE chat_id = ? AND parent_id IS NULL ORDER BY id", (chat_id,))
        return [rows.message(r) for r in result]

    async def siblings(self, message: Message) -> list[Message]:
        """The message and its alternatives (swipes, edits): same parent, same role.
        A reply stopped or failed before its first word is not one: nothing of it
        was ever shown, so it is no swipe to count or page to (it stays in the tree)."""
        group = await (self.roots(message.chat_id) if message.parent_id is None else self.children(message.parent_id))
        return [m for m in group if m.role == message.role and (m.id == message.id or not _never_written(m))]

    async def count(self, chat_id: int | None = None) -> int:
        if chat_id is None:
            row = await self.db.one("SELECT count(*) FROM messages")
        else:
            row = await self.db.one("SELECT count(*) FROM messages WHERE chat_id = ?", (chat_id,))
        return int(row[0]) if row else 0

    async def mark_streaming_interrupted(self, chat_id: int) -> int:
        """Replies left 'streaming' by a process that died are interrupted replies."""
        async with self.db.write() as conn:
            cur = await conn.execute(
                "UPDATE messages SET status = ? WHERE chat_id = ? AND status = ?",
                (str(MessageStatus.INTERRUPTED), chat_id, str(MessageStatus.STREAMING)),
            )
            return cur.rowcount

    # -- paths ------------------------------------------------------------------

    async def path(self, head_id: int | None, *, limit: int | None = None, stop_before: int | None = None) -> list[Message]:
        """Messages from the root (or from just after `stop_before`) down to `head_id`,
        oldest first, at most `limit` of the newest ones."""
        if head_id is None or head_id == stop_before:
            return []
        cte = walk_up(
            "up", start=":head",
            until="m.id IS NOT :stop AND up.depth > (SELECT depth FROM messages WHERE id = :head) - :cap + 1",
        )
        result = await self.db.all(
            f"WITH RECURSIVE {cte} SELECT {rows.M_MESSAGE_COLUMNS} FROM up JOIN messages m ON m.id = up.id ORDER BY up.depth",
            {"head": head_id, "stop": stop_before, "cap": limit if limit is not None else _NO_LIMIT},
        )
        return [rows.message(r) for r in result]

    async def path_start(self, head_id: int | None, *, limit: int | None = None, stop_before: int | None = None) -> int | None:
        """The id of the oldest message `path` would return, without reading the messages."""
        if head_id is None or head_id == stop_before:
            return None
        cte = walk_up(
            "up", start=":head",
            until="m.id IS NOT :stop AND up.depth > (SELECT depth FROM messages WHERE id = :head) - :cap + 1",
        )
        row = await self.db.one(
            f"WITH RECURSIVE {cte} SELECT id FROM up ORDER BY depth LIMIT 1",
            {"head": head_id, "stop": stop_before, "cap": limit if limit is not None else _NO_LIMIT},
        )
        return int(row[0]) if row else None

    async def path_slice(self, head_id: int, start_depth: int, count: int) -> list[Message]:
        """The messages at depths [start_depth, start_depth + count) on the path to
        `head_id`, oldest first. The walk up starts at the slice's last depth when
        the chat has one message there (it is then on the path), else at the head."""
        start = await self._only_message_at(head_id, start_depth + count - 1)
        cte = walk_up("up", start=":from", until="up.depth > :start")
        result = await self.db.all(
            f"""WITH RECURSIVE {cte} SELECT {rows.M_MESSAGE_COLUMNS} FROM up JOIN messages m ON m.id = up.id
                WHERE up.depth >= :start AND up.depth < :start + :count ORDER BY up.depth""",
            {"from": start or head_id, "start": start_depth, "count": count},
        )
        return [rows.message(r) for r in result]

    async def _only_message_at(self, head_id: int, depth: int) -> int | None:
        """The chat's one message at `depth`, if it has exactly one and the head is
        at least that deep (every path to the head passes through it)."""
        found = await self.db.all(
            """SELECT m.id FROM messages h JOIN messages m ON m.chat_id = h.chat_id AND m.depth = :depth
               WHERE h.id = :head AND h.depth >= :depth LIMIT 2""",
            {"head": head_id, "depth": depth},
        )
        return found[0][0] if len(found) == 1 else None

    async def first_on_path_since(self, head_id: int, moment: str) -> Message | None:
        """The oldest message on the path to `head_id` written at or after `moment` (ISO)."""
        cte = walk_up("up", start="?", columns="id, parent_id, depth, created_at")
        row = await self.db.one(
            f"WITH RECURSIVE {cte} SELECT id FROM up WHERE created_at >= ? ORDER BY depth LIMIT 1", (head_id, moment)
        )
        return await self.get(row[0]) if row else None

    async def is_ancestor(self, ancestor_id: int, descendant_id: int) -> bool:
        """True when `ancestor_id` lies on the path from the root to `descendant_id` (inclusive)."""
        a = await self.get(ancestor_id)
        d = await self.get(descendant_id)
        if a.chat_id != d.chat_id or a.depth > d.depth:
            return False
        if await self._only_message_at(descendant_id, a.depth) == ancestor_id:
            return True  # the chat never forked at that depth: no walk up the path
        cte = walk_up("up", start=":d", until="up.depth > :depth")
        row = await self.db.one(f"WITH RECURSIVE {cte} SELECT id FROM up WHERE depth = :depth", {"d": descendant_id, "depth": a.depth})
        return row is not None and row[0] == ancestor_id

    async def fork_point(self, a: int, b: int) -> Message | None:
        """The deepest message on both paths (their common ancestor)."""
        row = await self.db.one(
            f"""WITH RECURSIVE {walk_up("up_a", start=":a")}, {walk_up("up_b", start=":b")}
                SELECT id FROM up_a WHERE id IN (SELECT id FROM up_b) ORDER BY depth DESC LIMIT 1""",
            {"a": a, "b": b},
        )
        return await self.get(row[0]) if row else None

    async def search(self, query: str, *, chat_id: int | None = None, character: str | None = None, limit: int = 50) -> list[SearchHit]:
        """Full-text search over every message ever stored (all branches), newest first.
        Words are matched as typed (each one quoted), so no query can be a syntax error."""
        terms = re.findall(r"\w+", query, flags=re.UNICODE)
        if not terms:
            return []
        match = " ".join('"' + t.replace('"', '""') + '"' for t in terms)
        where = ["messages_fts MATCH ?"]
        params: list[object] = [match]
        if chat_id is not None:
            where.append("m.chat_id = ?")
            params.append(chat_id)
        if character is not None:
            where.append("m.chat_id IN (SELECT id FROM chats WHERE character = ?)")
            params.append(character)
        result = await self.db.all(
            f"""SELECT {rows.M_MESSAGE_COLUMNS},
                       {rows.snippet_sql('messages_fts')} AS snippet
                FROM messages_fts JOIN messages m ON m.id = messages_fts.rowid
                WHERE {' AND '.join(where)} ORDER BY messages_fts.rowid DESC LIMIT ?""",  # the index first (store/recall.py: said_with)
            (*params, limit),
        )
        return [SearchHit(rows.message(r), r["snippet"]) for r in result]


def _never_written(message: Message) -> bool:
    return not message.content and message.status in (MessageStatus.INTERRUPTED, MessageStatus.FAILED)
