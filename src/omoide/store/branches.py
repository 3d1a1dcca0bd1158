"""Branches: named pointers to messages. Saving writes one row, restoring
moves the chat's head (after auto-saving where it was)."""

from __future__ import annotations

from omoide.domain.chat import Branch
from omoide.errors import NotFound, StoreError
from omoide.store import rows
from omoide.store.db import Database


class BranchRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def save(self, chat_id: int, name: str, message_id: int, *, force: bool = False, auto: bool = False) -> Branch:
        existing = await self.get(chat_id, name)
        if existing is not None and not force:
            raise StoreError(
                f"A branch named '{name}' already exists.",
                f"Use `/branch save {name} --force` to move it here, or pick another name.",
            )
        async with self.db.write() as conn:
            await conn.execute(
                """INSERT INTO branches (chat_id, name, message_id, created_at, auto) VALUES (?, ?, ?, ?, ?)
                   ON CONFLICT (chat_id, name) DO UPDATE SET message_id = excluded.message_id,
                       created_at = excluded.created_at, auto = excluded.auto""",
                (chat_id, name, message_id, self.db.now_iso(), int(auto)),
            )
        branch = await self.get(chat_id, name)
        assert branch is not None
        return branch

    async def get(self, chat_id: int, name: str) -> Branch | None:
        row = await self.db.one("SELECT * FROM branches WHERE chat_id = ? AND name = ?", (chat_id, name))
        return rows.branch(row) if row else None

    async def at(self, chat_id: int, message_id: int) -> Branch | None:
        """A branch already saved at `message_id` (a named one before an automatic one)."""
        row = await self.db.one("SELECT * FROM branches WHERE chat_id = ? AND message_id = ? ORDER BY auto, created_at LIMIT 1",
                                (chat_id, message_id))
        return rows.branch(row) if row else None

    async def list(self, chat_id: int) -> list[Branch]:
        result = await self.db.all("SELECT * FROM branches WHERE chat_id = ? ORDER BY created_at, name", (chat_id,))
        return [rows.branch(r) for r in result]

    async def delete(self, chat_id: int, name: str) -> bool:
        async with self.db.write() as conn:
            cur = await conn.execute("DELETE FROM branches WHERE chat_id = ? AND name = ?", (chat_id, name))
            return cur.rowcount > 0

    async def restore(self, chat_id: int, name: str, *, autosave_name: str | None) -> tuple[Branch, Branch | None]:
        """Move the head to a branch, first saving the current head as `autosave_name`
        (unless a branch is already saved there: that one is returned).
        One transaction: a crash leaves the chat at the old head or the new one."""
        target = await self.get(chat_id, name)
        if target is None:
            names = [b.name for b in await self.list(chat_id)]
            listing = ", ".join(names) if names else "none yet"
            raise NotFound(f"There is no branch named '{name}'.", f"Branches in this chat: {listing}.")
        row = await self.db.one("SELECT head_id FROM chats WHERE id = ?", (chat_id,))
        if row is None:
            raise NotFound(f"There is no chat #{chat_id}.", "`omoide chats` lists the chats there are.")
        head_id: int | None = row[0]
        already = await self.at(chat_id, head_id) if head_id is not None else None
        stamp = self.db.now_iso()
        async with self.db.write() as conn:
            if autosave_name and head_id is not None and already is None:
                await conn.execute(
                    "INSERT OR REPLACE INTO branches (chat_id, name, message_id, created_at, auto) VALUES (?, ?, ?, ?, 1)",
                    (chat_id, autosave_name, head_id, stamp),
                )
            await conn.execute("UPDATE chats SET head_id = ?, updated_at = ? WHERE id = ?", (target.message_id, stamp, chat_id))
        if already is not None or not autosave_name or head_id is None:
            return target, already
        return target, await self.get(chat_id, autosave_name)
