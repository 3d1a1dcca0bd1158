"""World memory: conversations, the append-only update log, and versioned values.

A change is one transaction that appends a log row (before, after, template,
model, the conversation and message behind it) and a new version of the
field. Nothing here updates or deletes a value; the only rows ever updated
are a conversation's bookkeeping (its state, attempts and whether it is in force).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence

import aiosqlite

from omoide.errors import NotFound
from omoide.store.db import Database
from omoide.store.paths import walk_up
from omoide.store.rows import ts
from omoide.domain.world import (
    Conversation,
    Field,
    Mention,
    Participant,
    Update,
    UpdateKind,
    WorldView,
)

_LATEST = """SELECT about, field, value FROM world_versions v
              WHERE owner = ? AND id = (SELECT max(id) FROM world_versions w
                                        WHERE w.owner = v.owner AND w.about = v.about AND w.field = v.field)"""


class Conflict(Exception):
    """The field changed since the caller read it (compare-and-set failed)."""


ANY: object = object()
"""`change(expect=ANY)`: change the field whatever its value."""


def _conversation(row: sqlite3.Row) -> Conversation:
    return Conversation(
        id=row["id"],
        chat_id=row["chat_id"],
        first_id=row["first_id"],
        end_id=row["end_id"],
        participants=[Participant(p["key"], p["name"]) for p in json.loads(row["participants"])],
        mentions=[Mention(m["key"], m["name"], m["message_id"]) for m in json.loads(row["mentions"])],
        reason=row["reason"],
        state=row["state"],
        in_force=bool(row["in_force"]),
        attempts=row["attempts"],
        ended_at=ts(row["ended_at"]),
    )


def _update(row: sqlite3.Row) -> Update:
    return Update(
        id=row["id"],
        conversation_id=row["conversation_id"],
        message_id=row["message_id"],
        owner=row["owner"],
        about=row["about"],
        field=Field(row["field"]),
        step=row["step"],
        kind=UpdateKind(row["kind"]),
        before=row["before"],
        after=row["after"],
        template=row["template"],
        model=row["model"],
        error=row["error"],
        created_at=ts(row["created_at"]),
    )


class WorldRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    # -- conversations ------------------------------------------------------------

    async def add_conversation(
        self, chat_id: int, first_id: int | None, end_id: int, participants: Sequence[Participant],
        mentions: Sequence[Mention], reason: str,
    ) -> Conversation:
        async with self.db.write() as conn:
            cur = await conn.execute(
                """INSERT INTO world_conversations (chat_id, first_id, end_id, participants, mentions, reason, ended_at)
                   VALUES (?, ?, ?, ?, ?, ?, ?)""",
                (
                    chat_id, first_id, end_id,
                    json.dumps([{"key": p.key, "name": p.name} for p in participants], ensure_ascii=False),
                    json.dumps([{"key": m.key, "name": m.name, "message_id": m.message_id} for m in mentions], ensure_ascii=False),
                    reason, self.db.now_iso(),
                ),
            )
            conversation_id = cur.lastrowid
        assert conversation_id is not None
        return await self.conversation(conversation_id)

    async def conversation(self, conversation_id: int) -> Conversation:
        row = await self.db.one("SELECT * FROM world_conversations WHERE id = ?", (conversation_id,))
        if row is None:
            raise NotFound(f"There is no conversation #{conversation_id}.", "`omoide log CHARACTER` lists them.")
        return _conversation(row)

    async def conversations(self, *, chat_id: int | None = None, owner: str | None = None,
                            unfinished: bool = False, limit: int = 1000) -> list[Conversation]:
        """Newest first. `owner`: conversations that character took part in."""
        where: list[str] = []
        params: list[object] = []
        if chat_id is not None:
            where.append("chat_id = ?")
            params.append(chat_id)
        if owner is not None:
            where.append("EXISTS (SELECT 1 FROM json_each(participants) WHERE json_extract(value, '$.key') = ?)")
            params.append(owner)
        if unfinished:
            where.append("state != 'done'")
        clause = f" WHERE {' AND '.join(where)}" if where else ""
        result = await self.db.all(f"SELECT * FROM world_conversations{clause} ORDER BY id DESC LIMIT ?", (*params, limit))
        return [_conversation(r) for r in result]

    async def set_state(self, conversation_id: int, state: str) -> None:
        async with self.db.write() as conn:
            await conn.execute(
                "UPDATE world_conversations SET state = ?, attempts = attempts + 1 WHERE id = ?", (state, conversation_id)
            )

    async def set_in_force(self, conversation_id: int, in_force: bool) -> None:
        async with self.db.write() as conn:
            await conn.execute("UPDATE world_conversations SET in_force = ? WHERE id = ?", (int(in_force), conversation_id))

    async def ends_on_path(self, head_id: int | None, end_ids: Sequence[int]) -> set[int]:
        """Which of `end_ids` lie on the path from the root to `head_id`: one walk up
        from the head, no further than the shallowest of them."""
        if head_id is None or not end_ids:
            return set()
        marks = ",".join("?" * len(end_ids))
        row = await self.db.one(f"SELECT min(depth) FROM messages WHERE id IN ({marks})", tuple(end_ids))
        floor = row[0] if row and row[0] is not None else 0
        cte = walk_up("up", start="?", until="up.depth > ?")
        result = await self.db.all(
            f"WITH RECURSIVE {cte} SELECT id FROM up WHERE id IN ({marks})", (head_id, floor, *end_ids)
        )
        return {r[0] for r in result}

    # -- values ---------------------------------------------------------------------

    async def view(self, owner: str) -> WorldView:
        view = WorldView(owner)
        for row in await self.db.all(_LATEST, (owner,)):
            view.set(row["about"], Field(row["field"]), row["value"])
        return view

    async def current(self, owner: str, about: str, field: Field) -> str | None:
        row = await self.db.one(
            "SELECT value FROM world_versions WHERE owner = ? AND about = ? AND field = ? ORDER BY id DESC LIMIT 1",
            (owner, about, str(field)),
        )
        return row[0] if row else None

    async def versions(self, owner: str, about: str, field: Field) -> list[tuple[int, str, int]]:
        """Every version of a field, oldest first: (version, value, update id)."""
        result = await self.db.all(
            "SELECT version, value, update_id FROM world_versions WHERE owner = ? AND about = ? AND field = ? ORDER BY id",
            (owner, about, str(field)),
        )
        return [(r[0], r[1], r[2]) for r in result]

    async def abouts(self, owner: str, field: Field) -> list[str]:
        result = await self.db.all(
            "SELECT DISTINCT about FROM world_versions WHERE owner = ? AND field = ? ORDER BY about", (owner, str(field))
        )
        return [r[0] for r in result]

    async def owners(self) -> list[str]:
        return [r[0] for r in await self.db.all("SELECT DISTINCT owner FROM world_versions ORDER BY owner")]

    async def change(
        self, owner: str, about: str, field: Field, value: str, *, step: str, kind: UpdateKind,
        conversation_id: int | None = None, message_id: int | None = None, template: str | None = None,
        model: str | None = None, expect: object = ANY,
    ) -> Update:
        """Log the change and write the new version, in one transaction. With
        `expect`, the change is made only if the field's value is still `expect`
        (None: it has no value yet); otherwise `Conflict` is raised."""
        stamp = self.db.now_iso()
        async with self.db.write() as conn:
            async with conn.execute(
                "SELECT value, version FROM world_versions WHERE owner = ? AND about = ? AND field = ? ORDER BY id DESC LIMIT 1",
                (owner, about, str(field)),
            ) as cur:
                row = await cur.fetchone()
            before, version = (row[0], row[1]) if row else (None, 0)
            if expect is not ANY and before != expect:
                raise Conflict(f"{owner}/{about}/{field} changed")
            update_id = await self._log(conn, conversation_id, message_id, owner, about, field, step, kind,
                                        before, value, template, model, None, stamp)
            await conn.execute(
                """INSERT INTO world_versions (owner, about, field, version, value, update_id, created_at)
                   VALUES (?, ?, ?, ?, ?, ?, ?)""",
                (owner, about, str(field), version + 1, value, update_id, stamp),
            )
        return await self.update(update_id)

    async def note(
        self, owner: str, about: str, field: Field, *, step: str, kind: UpdateKind, error: str | None = None,
        conversation_id: int | None = None, message_id: int | None = None, template: str | None = None,
        model: str | None = None, before: str | None = None, after: str | None = None,
    ) -> Update:
        """A log row that changes no value: a failed step, or a field left alone."""
        async with self.db.write() as conn:
            update_id = await self._log(conn, conversation_id, message_id, owner, about, field, step, kind,
                                        before, after, template, model, error, self.db.now_iso())
        return await self.update(update_id)

    @staticmethod
    async def _log(conn: aiosqlite.Connection, conversation_id: int | None, message_id: int | None, owner: str, about: str,
                   field: Field, step: str, kind: UpdateKind, before: str | None, after: str | None,
                   template: str | None, model: str | None, error: str | None, stamp: str) -> int:
        cur = await conn.execute(
            """INSERT INTO world_updates (conversation_id, message_id, owner, about, field, step, kind, before, after,
                                          template, model, error, created_at)
               VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
            (conversation_id, message_id, owner, about, str(field), step, str(kind), before, after, template, model, error, stamp),
        )
        update_id: int | None = cur.lastrowid
        assert update_id is not None
        return update_id

    # -- the log ----------------------------------------------------------------------

    async def update(self, update_id: int) -> Update:
        row = await self.db.one("SELECT * FROM world_updates WHERE id = ?", (update_id,))
        assert row is not None
        return _update(row)

    async def updates(self, *, conversation_id: int | None = None, owner: str | None = None, limit: int = 10_000) -> list[Update]:
        """Oldest first."""
        where: list[str] = []
        params: list[object] = []
        if conversation_id is not None:
            where.append("conversation_id = ?")
            params.append(conversation_id)
        if owner is not None:
            where.append("owner = ?")
            params.append(owner)
        clause = f" WHERE {' AND '.join(where)}" if where else ""
        result = await self.db.all(f"SELECT * FROM world_updates{clause} ORDER BY id LIMIT ?", (*params, limit))
        return [_update(r) for r in result]

    async def applied(self, conversation_id: int) -> list[Update]:
        """The conversation's own changes (generated or computed) that wrote a version, oldest first."""
        result = await self.db.all(
            """SELECT u.* FROM world_updates u WHERE u.conversation_id = ? AND u.kind IN ('llm', 'rule')
               AND EXISTS (SELECT 1 FROM world_versions v WHERE v.update_id = u.id) ORDER BY u.id""",
            (conversation_id,),
        )
        return [_update(r) for r in result]

    async def done_steps(self, conversation_id: int) -> set[tuple[str, str, str]]:
        """(owner, about, step) of the steps of a conversation that were applied."""
        result = await self.db.all(
            "SELECT owner, about, step FROM world_updates WHERE conversation_id = ? AND kind IN ('llm', 'rule')",
            (conversation_id,),
        )
        return {(r[0], r[1], r[2]) for r in result}

    async def edits(self, owner: str) -> list[Update]:
        """Changes made by hand (no conversation behind them), oldest first."""
        result = await self.db.all(
            "SELECT * FROM world_updates WHERE owner = ? AND conversation_id IS NULL ORDER BY id", (owner,)
        )
        return [_update(r) for r in result]
