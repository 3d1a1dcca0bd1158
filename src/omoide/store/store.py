"""The Store: every query omoide makes, returning domain objects.

One aiosqlite connection per process. Writes go through `_write()`, which
serialises this process's transactions and takes SQLite's write lock up front.
"""

from __future__ import annotations

import asyncio
import json
import re
import sqlite3
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiosqlite

from omoide import locations
from omoide.domain import (
    Branch,
    Chat,
    DiaryAuthor,
    DiaryEntry,
    MemoryState,
    Message,
    MessageStatus,
    Role,
    Summary,
)
from omoide.errors import NotFound, StoreError
from omoide.store import rows
from omoide.store.connection import now_iso, open_connection, storage_error, write_transaction

@dataclass(frozen=True, slots=True)
class ImportNode:
    parent: int | None
    """Index of the parent in the import list, or None for a root."""
    role: Role
    content: str
    created_at: str | None = None
    status: MessageStatus = MessageStatus.COMPLETE


@dataclass(frozen=True, slots=True)
class SearchHit:
    message: Message
    snippet: str
    """The matching words in [brackets], with a little context."""


WINDOW_CAP = 2000
"""Most messages read for the raw window, however long compression has been failing."""
DIARY_CHAIN_CAP = 10_000
MEMORY_DIARY_CAP = 100
"""Diary entries read per turn: more than the prompt's 50 lines need, and more than
compression lets accumulate, unless compression has been failing for a long time."""


class Store:
    def __init__(self, conn: aiosqlite.Connection, path: Path) -> None:
        self.conn = conn
        self.db_path = path
        self._lock = asyncio.Lock()

    @classmethod
    async def open(cls, path: Path | None = None, *, synchronous: str = "NORMAL") -> Store:
        path = path or locations.database_file()
        conn = await open_connection(path, synchronous=synchronous)
        return cls(conn, path)

    async def close(self) -> None:
        await self.conn.close()

    async def __aenter__(self) -> Store:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- plumbing ---------------------------------------------------------

    @asynccontextmanager
    async def _write(self) -> AsyncIterator[aiosqlite.Connection]:
        async with self._lock:
            try:
                async with write_transaction(self.conn) as conn:
                    yield conn
            except (sqlite3.OperationalError, OSError) as exc:
                raise storage_error(self.db_path, exc) from exc

    async def _one(self, sql: str, params: Sequence[Any] = ()) -> sqlite3.Row | None:
        try:
            async with self.conn.execute(sql, params) as cur:
                return await cur.fetchone()
        except sqlite3.OperationalError as exc:
            raise storage_error(self.db_path, exc) from exc

    async def _all(self, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        try:
            async with self.conn.execute(sql, params) as cur:
                return list(await cur.fetchall())
        except sqlite3.OperationalError as exc:
            raise storage_error(self.db_path, exc) from exc

    # -- chats --------------------------------------------------------------

    async def create_chat(self, character: str, *, title: str = "", greeting: str | None = None,
                          alternate_greetings: Sequence[str] = ()) -> Chat:
        """A new chat; its first message, when given, is the character's greeting,
        and alternate greetings become its swipes (sibling roots)."""
        greetings = [greeting, *alternate_greetings] if greeting is not None else []
        nodes = [ImportNode(None, Role.ASSISTANT, text) for text in greetings]
        return await self.import_tree(character, title, nodes, 0 if nodes else None)

    _CHAT_SELECT = (
        "SELECT c.*, (SELECT depth + 1 FROM messages WHERE id = c.head_id) AS message_count FROM chats c"
    )

    async def get_chat(self, chat_id: int) -> Chat:
        row = await self._one(f"{self._CHAT_SELECT} WHERE c.id = ?", (chat_id,))
        if row is None:
            raise NotFound(f"There is no chat #{chat_id}.", "`omoide chats` lists the chats there are.")
        return rows.chat(row)

    async def latest_chat(self, character: str) -> Chat | None:
        row = await self._one(
            f"{self._CHAT_SELECT} WHERE c.character = ? AND c.archived = 0 ORDER BY c.updated_at DESC, c.id DESC LIMIT 1",
            (character,),
        )
        return rows.chat(row) if row else None

    async def list_chats(self, character: str | None = None, *, include_archived: bool = False) -> list[Chat]:
        where, params = [], []
        if character is not None:
            where.append("c.character = ?")
            params.append(character)
        if not include_archived:
            where.append("c.archived = 0")
        clause = f" WHERE {' AND '.join(where)}" if where else ""
        result = await self._all(f"{self._CHAT_SELECT}{clause} ORDER BY c.updated_at DESC, c.id DESC", params)
        return [rows.chat(r) for r in result]

    async def rename_chat(self, chat_id: int, title: str) -> Chat:
        await self.get_chat(chat_id)
        async with self._write() as conn:
            await conn.execute("UPDATE chats SET title = ?, updated_at = ? WHERE id = ?", (title.strip(), now_iso(), chat_id))
        return await self.get_chat(chat_id)

    async def archive_chat(self, chat_id: int, archived: bool = True) -> Chat:
        await self.get_chat(chat_id)
        async with self._write() as conn:
            await conn.execute("UPDATE chats SET archived = ? WHERE id = ?", (int(archived), chat_id))
        return await self.get_chat(chat_id)

    async def set_persona(self, chat_id: int, persona: str | None) -> Chat:
        async with self._write() as conn:
            await conn.execute("UPDATE chats SET persona = ? WHERE id = ?", (persona, chat_id))
        return await self.get_chat(chat_id)

    async def set_head(self, chat_id: int, message_id: int) -> None:
        msg = await self.get_message(message_id)
        if msg.chat_id != chat_id:
            raise StoreError(f"Message #{message_id} belongs to another chat.", "")
        async with self._write() as conn:
            await conn.execute("UPDATE chats SET head_id = ?, updated_at = ? WHERE id = ?", (message_id, now_iso(), chat_id))

    # -- messages -----------------------------------------------------------

    async def _insert_message(
        self,
        conn: aiosqlite.Connection,
        chat_id: int,
        parent_id: int | None,
        role: Role,
        content: str,
        status: MessageStatus,
        tool_calls: list[dict[str, Any]] | None,
        tool_call_id: str | None,
        stamp: str,
    ) -> int:
        if parent_id is None:
            depth, summary_id, diary_id = 0, None, None
        else:
            async with conn.execute(
                """SELECT m.depth, m.chat_id,
                      coalesce((SELECT id FROM summaries WHERE anchor_id = m.id ORDER BY id DESC LIMIT 1), m.summary_id),
                      coalesce((SELECT id FROM diary_entries WHERE message_id = m.id ORDER BY id DESC LIMIT 1), m.diary_id)
                   FROM messages m WHERE m.id = ?""",
                (parent_id,),
            ) as cur:
                parent = await cur.fetchone()
            if parent is None or parent[1] != chat_id:
                raise NotFound(f"The parent message #{parent_id} is not in chat #{chat_id}.", "")
            depth, summary_id, diary_id = parent[0] + 1, parent[2], parent[3]
        cur = await conn.execute(
            """INSERT INTO messages (chat_id, parent_id, role, content, tool_calls, tool_call_id,
                                     created_at, status, depth, summary_id, diary_id)
               VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
            (
                chat_id, parent_id, str(role), content,
                json.dumps(tool_calls) if tool_calls else None, tool_call_id,
                stamp, str(status), depth, summary_id, diary_id,
            ),
        )
        assert cur.lastrowid is not None
        return cur.lastrowid

    async def add_message(
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
    ) -> Message:
        """Append a message under `parent_id` (and make it the head, by default)."""
        stamp = now_iso()
        async with self._write() as conn:
            msg_id = await self._insert_message(conn, chat_id, parent_id, role, content, status, tool_calls, tool_call_id, stamp)
            if move_head:
                await conn.execute("UPDATE chats SET head_id = ?, updated_at = ? WHERE id = ?", (msg_id, stamp, chat_id))
        return await self.get_message(msg_id)

    async def import_tree(self, character: str, title: str, nodes: Sequence[ImportNode], head_index: int | None) -> Chat:
        """Create a chat holding a whole message tree in one transaction: a failed
        import leaves nothing behind. `nodes` are in parent-before-child order."""
        stamp = now_iso()
        async with self._write() as conn:
            cur = await conn.execute(
                "INSERT INTO chats (character, title, created_at, updated_at) VALUES (?, ?, ?, ?)",
                (character, title, stamp, stamp),
            )
            chat_id = cur.lastrowid
            assert chat_id is not None
            ids: list[int] = []
            for node in nodes:
                parent = ids[node.parent] if node.parent is not None else None
                ids.append(await self._insert_message(
                    conn, chat_id, parent, node.role, node.content, node.status, None, None,
                    node.created_at or stamp,
                ))
            if head_index is not None and ids:
                await conn.execute("UPDATE chats SET head_id = ? WHERE id = ?", (ids[head_index], chat_id))
        return await self.get_chat(chat_id)

    async def tree(self, chat_id: int) -> list[Message]:
        """Every message of a chat, parents before children."""
        result = await self._all(f"SELECT {rows.MESSAGE_COLUMNS} FROM messages WHERE chat_id = ? ORDER BY id", (chat_id,))
        return [rows.message(r) for r in result]

    async def update_message(self, message_id: int, *, content: str | None = None, status: MessageStatus | None = None,
                             tool_calls: list[dict[str, Any]] | None = None) -> Message:
        """Fill in a reply as it streams or when it ends. Only replies are updated."""
        sets, params = [], []
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
            async with self._write() as conn:
                await conn.execute(f"UPDATE messages SET {', '.join(sets)} WHERE id = ?", (*params, message_id))
        return await self.get_message(message_id)

    async def get_message(self, message_id: int) -> Message:
        row = await self._one(f"SELECT {rows.MESSAGE_COLUMNS} FROM messages WHERE id = ?", (message_id,))
        if row is None:
            raise NotFound(f"There is no message #{message_id}.", "")
        return rows.message(row)

    async def children(self, message_id: int) -> list[Message]:
        result = await self._all(f"SELECT {rows.MESSAGE_COLUMNS} FROM messages WHERE parent_id = ? ORDER BY id", (message_id,))
        return [rows.message(r) for r in result]

    async def roots(self, chat_id: int) -> list[Message]:
        result = await self._all(
            f"SELECT {rows.MESSAGE_COLUMNS} FROM messages WHERE chat_id = ? AND parent_id IS NULL ORDER BY id", (chat_id,)
        )
        return [rows.message(r) for r in result]

    async def siblings(self, message: Message) -> list[Message]:
        """The message and its alternatives (swipes, edits): same parent, same role."""
        if message.parent_id is None:
            group = await self.roots(message.chat_id)
        else:
            group = await self.children(message.parent_id)
        return [m for m in group if m.role == message.role]

    async def path(self, head_id: int | None, *, limit: int | None = None, stop_before: int | None = None) -> list[Message]:
        """Messages from the root (or from just after `stop_before`) down to `head_id`,
        oldest first, at most `limit` of the newest ones."""
        if head_id is None:
            return []
        cap = limit if limit is not None else 1_000_000_000
        result = await self._all(
            f"""WITH RECURSIVE up(id, parent_id, n) AS (
                    SELECT id, parent_id, 1 FROM messages WHERE id = :head AND id IS NOT :stop
                    UNION ALL
                    SELECT m.id, m.parent_id, up.n + 1 FROM messages m JOIN up ON m.id = up.parent_id
                    WHERE m.id IS NOT :stop AND up.n < :cap
                )
                SELECT {rows.M_MESSAGE_COLUMNS}
                FROM up JOIN messages m ON m.id = up.id ORDER BY up.n DESC""",
            {"head": head_id, "stop": stop_before, "cap": cap},
        )
        return [rows.message(r) for r in result]

    async def path_slice(self, head_id: int, start_depth: int, count: int) -> list[Message]:
        """The messages at depths [start_depth, start_depth + count) on the path to
        `head_id`, oldest first. Costs a walk from the head up to `start_depth`."""
        result = await self._all(
            f"""WITH RECURSIVE up(id, parent_id, depth) AS (
                    SELECT id, parent_id, depth FROM messages WHERE id = :head
                    UNION ALL
                    SELECT m.id, m.parent_id, m.depth FROM messages m JOIN up ON m.id = up.parent_id
                    WHERE up.depth > :start
                )
                SELECT {rows.M_MESSAGE_COLUMNS}
                FROM up JOIN messages m ON m.id = up.id
                WHERE up.depth >= :start AND up.depth < :start + :count ORDER BY up.depth""",
            {"head": head_id, "start": start_depth, "count": count},
        )
        return [rows.message(r) for r in result]

    async def first_on_path_since(self, head_id: int, moment: str) -> Message | None:
        """The oldest message on the path to `head_id` written at or after `moment` (ISO)."""
        row = await self._one(
            """WITH RECURSIVE up(id, parent_id, depth, created_at) AS (
                   SELECT id, parent_id, depth, created_at FROM messages WHERE id = ?
                   UNION ALL
                   SELECT m.id, m.parent_id, m.depth, m.created_at FROM messages m JOIN up ON m.id = up.parent_id
               ) SELECT id FROM up WHERE created_at >= ? ORDER BY depth LIMIT 1""",
            (head_id, moment),
        )
        return await self.get_message(row[0]) if row else None

    async def is_ancestor(self, ancestor_id: int, descendant_id: int) -> bool:
        """True when `ancestor_id` lies on the path from the root to `descendant_id` (inclusive)."""
        a = await self.get_message(ancestor_id)
        d = await self.get_message(descendant_id)
        if a.chat_id != d.chat_id or a.depth > d.depth:
            return False
        row = await self._one(
            """WITH RECURSIVE up(id, parent_id, depth) AS (
                   SELECT id, parent_id, depth FROM messages WHERE id = ?
                   UNION ALL
                   SELECT m.id, m.parent_id, m.depth FROM messages m JOIN up ON m.id = up.parent_id WHERE up.depth > ?
               ) SELECT id FROM up WHERE depth = ?""",
            (descendant_id, a.depth, a.depth),
        )
        return row is not None and row[0] == ancestor_id

    async def fork_point(self, a: int, b: int) -> Message | None:
        """The deepest message on both paths (their common ancestor)."""
        row = await self._one(
            """WITH RECURSIVE
                 up_a(id, parent_id) AS (SELECT id, parent_id FROM messages WHERE id = :a
                     UNION ALL SELECT m.id, m.parent_id FROM messages m JOIN up_a ON m.id = up_a.parent_id),
                 up_b(id, parent_id) AS (SELECT id, parent_id FROM messages WHERE id = :b
                     UNION ALL SELECT m.id, m.parent_id FROM messages m JOIN up_b ON m.id = up_b.parent_id)
               SELECT m.id FROM up_a JOIN messages m ON m.id = up_a.id
               WHERE up_a.id IN (SELECT id FROM up_b) ORDER BY m.depth DESC LIMIT 1""",
            {"a": a, "b": b},
        )
        return await self.get_message(row[0]) if row else None

    async def count_messages(self, chat_id: int | None = None) -> int:
        if chat_id is None:
            row = await self._one("SELECT count(*) FROM messages")
        else:
            row = await self._one("SELECT count(*) FROM messages WHERE chat_id = ?", (chat_id,))
        return int(row[0]) if row else 0

    async def mark_streaming_interrupted(self, chat_id: int) -> int:
        """Replies left 'streaming' by a process that died are interrupted replies."""
        async with self._write() as conn:
            cur = await conn.execute(
                "UPDATE messages SET status = ? WHERE chat_id = ? AND status = ?",
                (str(MessageStatus.INTERRUPTED), chat_id, str(MessageStatus.STREAMING)),
            )
            return cur.rowcount

    async def search(self, query: str, *, chat_id: int | None = None, character: str | None = None, limit: int = 50) -> list[SearchHit]:
        """Full-text search over every message ever stored (all branches), newest first.
        Words are matched as typed (each one quoted), so no query can be a syntax error."""
        terms = [t for t in re.findall(r"\w+", query, flags=re.UNICODE)]
        if not terms:
            return []
        match = " ".join('"' + t.replace('"', '""') + '"' for t in terms)
        where, params = ["messages_fts MATCH ?"], [match]
        if chat_id is not None:
            where.append("m.chat_id = ?")
            params.append(chat_id)
        if character is not None:
            where.append("m.chat_id IN (SELECT id FROM chats WHERE character = ?)")
            params.append(character)
        result = await self._all(
            f"""SELECT {rows.M_MESSAGE_COLUMNS},
                       snippet(messages_fts, 0, '[', ']', '…', 12) AS snippet
                FROM messages_fts JOIN messages m ON m.id = messages_fts.rowid
                WHERE {' AND '.join(where)} ORDER BY m.id DESC LIMIT ?""",
            (*params, limit),
        )
        return [SearchHit(rows.message(r), r["snippet"]) for r in result]

    # -- memory ---------------------------------------------------------------

    async def _pointers(self, message_id: int) -> tuple[int | None, int | None]:
        row = await self._one(
            """SELECT coalesce((SELECT id FROM summaries WHERE anchor_id = m.id ORDER BY id DESC LIMIT 1), m.summary_id),
                      coalesce((SELECT id FROM diary_entries WHERE message_id = m.id ORDER BY id DESC LIMIT 1), m.diary_id)
               FROM messages m WHERE m.id = ?""",
            (message_id,),
        )
        if row is None:
            raise NotFound(f"There is no message #{message_id}.", "")
        return row[0], row[1]

    async def add_diary_entry(self, chat_id: int, message_id: int, content: str, author: DiaryAuthor) -> DiaryEntry:
        """Record a diary entry at `message_id`; it exists on that message's subtree."""
        stamp = now_iso()
        async with self._write() as conn:
            async with conn.execute(
                """SELECT m.chat_id, coalesce((SELECT id FROM diary_entries WHERE message_id = m.id ORDER BY id DESC LIMIT 1), m.diary_id)
                   FROM messages m WHERE m.id = ?""",
                (message_id,),
            ) as cur:
                row = await cur.fetchone()
            if row is None or row[0] != chat_id:
                raise NotFound(f"Message #{message_id} is not in chat #{chat_id}.", "")
            cur = await conn.execute(
                "INSERT INTO diary_entries (chat_id, message_id, prev_id, author, content, created_at) VALUES (?, ?, ?, ?, ?, ?)",
                (chat_id, message_id, row[1], str(author), content, stamp),
            )
            entry_id = cur.lastrowid
        row = await self._one("SELECT * FROM diary_entries WHERE id = ?", (entry_id,))
        assert row is not None
        return rows.diary_entry(row)

    async def add_summary(self, chat_id: int, anchor_id: int, *, content: str, covers_to_id: int | None, diary_to_id: int | None) -> Summary:
        stamp = now_iso()
        async with self._write() as conn:
            cur = await conn.execute(
                "INSERT INTO summaries (chat_id, anchor_id, covers_to_id, diary_to_id, content, created_at) VALUES (?, ?, ?, ?, ?, ?)",
                (chat_id, anchor_id, covers_to_id, diary_to_id, content, stamp),
            )
            summary_id = cur.lastrowid
        row = await self._one("SELECT * FROM summaries WHERE id = ?", (summary_id,))
        assert row is not None
        return rows.summary(row)

    async def summary_at(self, head_id: int) -> Summary | None:
        summary_id, _ = await self._pointers(head_id)
        if summary_id is None:
            return None
        row = await self._one("SELECT * FROM summaries WHERE id = ?", (summary_id,))
        return rows.summary(row) if row else None

    async def diary_chain(self, newest_id: int | None, *, stop_at: int | None = None, limit: int = DIARY_CHAIN_CAP) -> list[DiaryEntry]:
        """Entries linked backwards from `newest_id`, oldest first. The walk stops
        after a compressed entry (it stands for everything before it), before
        `stop_at`, or after `limit` entries."""
        if newest_id is None or newest_id == stop_at:
            return []
        result = await self._all(
            """WITH RECURSIVE chain(id, prev_id, author, n) AS (
                   SELECT id, prev_id, author, 1 FROM diary_entries WHERE id = :newest
                   UNION ALL
                   SELECT d.id, d.prev_id, d.author, chain.n + 1 FROM diary_entries d JOIN chain ON d.id = chain.prev_id
                   WHERE chain.author != 'compression' AND d.id IS NOT :stop AND chain.n < :limit
               ) SELECT d.* FROM chain JOIN diary_entries d ON d.id = chain.id ORDER BY chain.n DESC""",
            {"newest": newest_id, "stop": stop_at, "limit": limit},
        )
        return [rows.diary_entry(r) for r in result]

    async def diary_at(self, head_id: int, *, limit: int = DIARY_CHAIN_CAP) -> list[DiaryEntry]:
        _, diary_id = await self._pointers(head_id)
        return await self.diary_chain(diary_id, limit=limit)

    async def memory_state(self, head_id: int, *, diary_limit: int = MEMORY_DIARY_CAP) -> MemoryState:
        """The summary, diary and raw window in force at `head_id`, read via the
        pointers: cost grows with the window and the diary, never with history."""
        summary_id, diary_id = await self._pointers(head_id)
        summary = None
        if summary_id is not None:
            row = await self._one("SELECT * FROM summaries WHERE id = ?", (summary_id,))
            summary = rows.summary(row) if row else None
        fold = summary.diary_to_id if summary else None
        new_diary = await self.diary_chain(diary_id, stop_at=fold, limit=diary_limit) if fold is not None else []
        stable_diary = await self.diary_chain(fold if fold is not None else diary_id, limit=diary_limit)
        if fold is None:
            stable_diary, new_diary = [], stable_diary
        window = await self.path(head_id, limit=WINDOW_CAP, stop_before=summary.covers_to_id if summary else None)
        return MemoryState(summary=summary, stable_diary=stable_diary, new_diary=new_diary, window=window)

    # -- branches ---------------------------------------------------------------

    async def save_branch(self, chat_id: int, name: str, message_id: int, *, force: bool = False, auto: bool = False) -> Branch:
        existing = await self.get_branch(chat_id, name)
        if existing is not None and not force:
            raise StoreError(
                f"A branch named '{name}' already exists.",
                f"Use `/branch save {name} --force` to move it here, or pick another name.",
            )
        async with self._write() as conn:
            await conn.execute(
                """INSERT INTO branches (chat_id, name, message_id, created_at, auto) VALUES (?, ?, ?, ?, ?)
                   ON CONFLICT (chat_id, name) DO UPDATE SET message_id = excluded.message_id,
                       created_at = excluded.created_at, auto = excluded.auto""",
                (chat_id, name, message_id, now_iso(), int(auto)),
            )
        branch = await self.get_branch(chat_id, name)
        assert branch is not None
        return branch

    async def get_branch(self, chat_id: int, name: str) -> Branch | None:
        row = await self._one("SELECT * FROM branches WHERE chat_id = ? AND name = ?", (chat_id, name))
        return rows.branch(row) if row else None

    async def list_branches(self, chat_id: int) -> list[Branch]:
        result = await self._all("SELECT * FROM branches WHERE chat_id = ? ORDER BY created_at, name", (chat_id,))
        return [rows.branch(r) for r in result]

    async def delete_branch(self, chat_id: int, name: str) -> bool:
        async with self._write() as conn:
            cur = await conn.execute("DELETE FROM branches WHERE chat_id = ? AND name = ?", (chat_id, name))
            return cur.rowcount > 0

    async def restore_branch(self, chat_id: int, name: str, *, autosave_name: str | None) -> tuple[Branch, Branch | None]:
        """Move the head to a branch, first saving the current head as `autosave_name`.
        One transaction: a crash leaves the chat at the old head or the new one."""
        target = await self.get_branch(chat_id, name)
        if target is None:
            names = [b.name for b in await self.list_branches(chat_id)]
            listing = ", ".join(names) if names else "none yet"
            raise NotFound(f"There is no branch named '{name}'.", f"Branches in this chat: {listing}.")
        chat = await self.get_chat(chat_id)
        stamp = now_iso()
        async with self._write() as conn:
            if autosave_name and chat.head_id is not None:
                await conn.execute(
                    "INSERT OR REPLACE INTO branches (chat_id, name, message_id, created_at, auto) VALUES (?, ?, ?, ?, 1)",
                    (chat_id, autosave_name, chat.head_id, stamp),
                )
            await conn.execute("UPDATE chats SET head_id = ?, updated_at = ? WHERE id = ?", (target.message_id, stamp, chat_id))
        saved = await self.get_branch(chat_id, autosave_name) if autosave_name and chat.head_id is not None else None
        return target, saved
