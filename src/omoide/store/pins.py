"""Pinned facts: per character, kept in every prompt of it; removed ones stay in the table."""

from __future__ import annotations

import sqlite3

from omoide.domain.chat import Pin, PinSource
from omoide.errors import NotFound
from omoide.store.db import Database
from omoide.store.rows import ts


def _pin(row: sqlite3.Row) -> Pin:
    return Pin(id=row["id"], character=row["character"], content=row["content"], source=PinSource(row["source"]),
               created_at=ts(row["created_at"]), chat_id=row["chat_id"], message_id=row["message_id"], diary_id=row["diary_id"])


class PinRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def add(self, character: str, content: str, source: PinSource, *, chat_id: int | None = None,
                  message_id: int | None = None, diary_id: int | None = None) -> Pin:
        async with self.db.write() as conn:
            cur = await conn.execute(
                """INSERT INTO pins (character, content, source, chat_id, message_id, diary_id, created_at)
                   VALUES (?, ?, ?, ?, ?, ?, ?)""",
                (character, content, str(source), chat_id, message_id, diary_id, self.db.now_iso()),
            )
            pin_id = cur.lastrowid
        assert pin_id is not None
        return await self.get(pin_id)

    async def get(self, pin_id: int) -> Pin:
        row = await self.db.one("SELECT * FROM pins WHERE id = ?", (pin_id,)) if 0 < pin_id < 2**63 else None
        if row is None:
            raise NotFound(f"There is no pin #{pin_id}.", "/pins (or `omoide pins CHARACTER`) lists the pins with their numbers.")
        return _pin(row)

    async def list(self, character: str) -> list[Pin]:
        """The pins in force for `character`, oldest first."""
        result = await self.db.all("SELECT * FROM pins WHERE character = ? AND removed_at IS NULL ORDER BY id", (character,))
        return [_pin(r) for r in result]

    async def remove(self, character: str, pin_id: int) -> Pin:
        """Take a pin of `character` out of its prompts (the row stays)."""
        pin = await self.get(pin_id)
        if pin.character != character or not await self.db.one("SELECT 1 FROM pins WHERE id = ? AND removed_at IS NULL", (pin_id,)):
            raise NotFound(f"{character} has no pin #{pin_id}.", "/pins (or `omoide pins CHARACTER`) lists the pins with their numbers.")
        async with self.db.write() as conn:
            await conn.execute("UPDATE pins SET removed_at = ? WHERE id = ?", (self.db.now_iso(), pin_id))
        return pin
