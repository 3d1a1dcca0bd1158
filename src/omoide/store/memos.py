"""The memo book: memos anchored to the message tree, each with a history of versions.

A memo is in force on the subtree of its anchor (the last message of its batch,
or the head you wrote it at), so the memos at a head are those anchored on its
path: a walk up the tree joined on the anchor index. The prompt reads a capped
walk (the last `PROMPT_WALK_CAP` messages), the book the whole path.

Nothing is overwritten: making, failing, editing, hiding and retrying each add a
version; the memo row only moves its `version_id` to the newest one.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass

import aiosqlite

from omoide.domain.chat import Memo, MemoAuthor, MemoStatus
from omoide.errors import NotFound
from omoide.store.db import Database
from omoide.store.paths import walk_up
from omoide.store.rows import bracketed, snippet_sql, ts

PROMPT_WALK_CAP = 2000
"""Messages above the head searched for the memos of the prompt (like the raw
window's cap): the common case finds them in the last few hundred."""

_COLUMNS = """x.id, x.chat_id, x.anchor_id, x.first_id, x.author, x.created_at, x.owner, f.depth AS first_depth,
       v.id AS version_id, v.author AS version_author, v.status, v.hidden, v.reason, v.created_at AS updated_at,
       a.depth AS anchor_depth, a.created_at AS last_at, f.created_at AS first_at,
       (SELECT json_group_array(text) FROM (SELECT text FROM memo_highlights h WHERE h.version_id = v.id ORDER BY position))
           AS highlights"""
_JOINS = """JOIN messages a ON a.id = x.anchor_id LEFT JOIN messages f ON f.id = x.first_id"""
_CURRENT = f"SELECT {_COLUMNS} FROM memos x JOIN memo_versions v ON v.id = x.version_id {_JOINS}"


@dataclass(frozen=True, slots=True)
class MemoHit:
    memo: Memo
    marked: str
    """The matching words between rows.MATCH_START and rows.MATCH_END, with a little context."""

    @property
    def snippet(self) -> str:
        """The matching words in [brackets], with a little context."""
        return bracketed(self.marked)


_AUTHORS = {author.value: author for author in MemoAuthor}
_STATUSES = {status.value: status for status in MemoStatus}
"""Stored value -> member: a dict lookup, where calling the enum is slow (a turn reads dozens of memos)."""


def memo(row: sqlite3.Row) -> Memo:
    return Memo(
        id=row["id"],
        chat_id=row["chat_id"],
        anchor_id=row["anchor_id"],
        anchor_depth=row["anchor_depth"],
        first_id=row["first_id"],
        author=_AUTHORS.get(row["author"]) or MemoAuthor(row["author"]),
        version_id=row["version_id"],
        version_author=_AUTHORS.get(row["version_author"]) or MemoAuthor(row["version_author"]),
        status=_STATUSES.get(row["status"]) or MemoStatus(row["status"]),
        highlights=tuple(json.loads(row["highlights"] or "[]")),
        created_at=ts(row["created_at"]),
        updated_at=ts(row["updated_at"]),
        hidden=bool(row["hidden"]),
        reason=row["reason"],
        first_at=ts(row["first_at"]) if row["first_at"] else None,
        last_at=ts(row["last_at"]) if row["last_at"] else None,
        first_depth=row["first_depth"],
        owner=row["owner"],
    )


PARSED_CAP = 4096
"""Memos kept parsed by `on_path` (a turn of a long chat reads hundreds)."""


class MemoRepository:
    def __init__(self, db: Database) -> None:
        self.db = db
        self._parsed: dict[tuple[int, int], Memo] = {}
        """(memo id, version id) -> the memo: a version's row never changes, so a
        memo read again at every turn is parsed once."""

    def _memo(self, row: sqlite3.Row) -> Memo:
        key = (row["id"], row["version_id"])
        found = self._parsed.get(key)
        if found is None:
            if len(self._parsed) >= PARSED_CAP:
                self._parsed.clear()
            found = self._parsed[key] = memo(row)
        return found

    # -- writing -----------------------------------------------------------------

    async def add(
        self,
        chat_id: int,
        anchor_id: int,
        *,
        author: MemoAuthor,
        highlights: Sequence[str] = (),
        first_id: int | None = None,
        reason: str | None = None,
        owner: str | None = None,
    ) -> Memo | None:
        """A new memo at `anchor_id`: made from the batch `first_id`..`anchor_id`
        (failed, a gap, when `reason` is given), or written by you. None when a
        made memo for that batch already exists (another window made it). With
        `owner`: that character's own memo of the part of the batch it witnessed."""
        stamp = self.db.now_iso()
        async with self.db.write() as conn:
            async with conn.execute("SELECT chat_id FROM messages WHERE id = ?", (anchor_id,)) as cur:
                row = await cur.fetchone()
            if row is None or row[0] != chat_id:
                raise NotFound(f"Message #{anchor_id} is not in chat #{chat_id}.", "Reopen the chat and try again.")
            if author is MemoAuthor.MODEL:
                async with conn.execute(
                    "SELECT 1 FROM memos WHERE anchor_id = ? AND author = 'model' AND first_id IS ? AND owner IS ?",
                    (anchor_id, first_id, owner),
                ) as cur:
                    if await cur.fetchone() is not None:
                        return None
            cur = await conn.execute(
                "INSERT INTO memos (chat_id, anchor_id, first_id, author, created_at, owner) VALUES (?, ?, ?, ?, ?, ?)",
                (chat_id, anchor_id, first_id, str(author), stamp, owner),
            )
            memo_id = cur.lastrowid
            assert memo_id is not None
            status = MemoStatus.FAILED if reason is not None else MemoStatus.OK
            await _add_version(conn, memo_id, author, status, False, reason, anchor_id, highlights, stamp)
        return await self.get(memo_id)

    async def revise(
        self,
        memo_id: int,
        *,
        author: MemoAuthor,
        at_id: int | None,
        highlights: Sequence[str] | None = None,
        hidden: bool | None = None,
        reason: str | None = None,
    ) -> Memo:
        """A new version of a memo: new highlights (an edit, or a retry that
        worked), hidden or shown again, or another failure. What is not given is
        carried over from the version before; the old version stays."""
        current = await self.get(memo_id)
        if highlights is not None:
            status = MemoStatus.OK
        elif reason is not None:
            status, highlights = MemoStatus.FAILED, ()
        else:
            status, highlights = current.status, current.highlights
            reason = current.reason
        async with self.db.write() as conn:
            await _add_version(
                conn, memo_id, author, status, current.hidden if hidden is None else hidden, reason, at_id, highlights, self.db.now_iso()
            )
        return await self.get(memo_id)

    # -- reading -----------------------------------------------------------------

    async def get(self, memo_id: int) -> Memo:
        row = await self.db.one(f"{_CURRENT} WHERE x.id = ?", (memo_id,))
        if row is None:
            raise NotFound(f"There is no memo #{memo_id}.", "`omoide memos CHARACTER --json` lists the memos with their ids.")
        return memo(row)

    async def on_path(self, head_id: int | None, *, cap: int | None = None) -> list[Memo]:
        """Every memo anchored on the path to `head_id` (within its last `cap`
        messages), oldest first, hidden ones and gaps included."""
        if head_id is None:
            return []
        floor = f"(SELECT depth FROM messages WHERE id = :head) - {int(cap)}" if cap is not None else "-1"
        cte = walk_up("up", start=":head", until=f"up.depth > {floor} + 1")
        result = await self.db.all(
            f"""WITH RECURSIVE {cte}
                SELECT {_COLUMNS} FROM up JOIN memos x ON x.anchor_id = up.id
                JOIN memo_versions v ON v.id = x.version_id {_JOINS}
                ORDER BY up.depth, x.id""",
            {"head": head_id},
        )
        return [self._memo(r) for r in result]

    async def any_in_chat(self, chat_id: int) -> bool:
        return await self.db.one("SELECT 1 FROM memos WHERE chat_id = ? LIMIT 1", (chat_id,)) is not None

    async def history(self, chat_id: int) -> list[Memo]:
        """Every version of every memo of a chat (all branches), oldest first: each
        item is the memo as that version had it. For the full-tree export."""
        result = await self.db.all(
            f"""SELECT {_COLUMNS} FROM memos x JOIN memo_versions v ON v.memo_id = x.id {_JOINS}
                WHERE x.chat_id = ? ORDER BY x.id, v.id""",
            (chat_id,),
        )
        return [memo(r) for r in result]

    async def search(self, query: str, *, chat_id: int | None = None, character: str | None = None, limit: int = 50) -> list[MemoHit]:
        """Full-text search over the memos as they now read (every branch), newest first."""
        terms = re.findall(r"\w+", query, flags=re.UNICODE)
        if not terms:
            return []
        where = ["memo_fts MATCH ?", "h.version_id = x.version_id", "v.hidden = 0"]
        params: list[object] = [" ".join('"' + t.replace('"', '""') + '"' for t in terms)]
        if chat_id is not None:
            where.append("x.chat_id = ?")
            params.append(chat_id)
        if character is not None:
            where.append("x.chat_id IN (SELECT id FROM chats WHERE character = ?)")
            params.append(character)
        result = await self.db.all(
            f"""SELECT {_COLUMNS}, {snippet_sql('memo_fts')} AS snippet
                FROM memo_fts JOIN memo_highlights h ON h.id = memo_fts.rowid
                JOIN memos x ON x.version_id = h.version_id JOIN memo_versions v ON v.id = x.version_id {_JOINS}
                WHERE {' AND '.join(where)} ORDER BY x.id DESC LIMIT ?""",
            (*params, limit),
        )
        return [MemoHit(memo(r), r["snippet"]) for r in result]


async def _add_version(
    conn: aiosqlite.Connection,
    memo_id: int,
    author: MemoAuthor,
    status: MemoStatus,
    hidden: bool,
    reason: str | None,
    at_id: int | None,
    highlights: Sequence[str],
    stamp: str,
) -> None:
    cur = await conn.execute(
        """INSERT INTO memo_versions (memo_id, author, status, hidden, reason, message_id, created_at)
           VALUES (?, ?, ?, ?, ?, ?, ?)""",
        (memo_id, str(author), str(status), int(hidden), reason, at_id, stamp),
    )
    version_id = cur.lastrowid
    await conn.executemany(
        "INSERT INTO memo_highlights (version_id, position, text) VALUES (?, ?, ?)",
        [(version_id, i, text) for i, text in enumerate(highlights)],
    )
    await conn.execute("UPDATE memos SET version_id = ? WHERE id = ?", (version_id, memo_id))
