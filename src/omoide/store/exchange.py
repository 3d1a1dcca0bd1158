"""What imported chat files carry beyond omoide's own columns (SillyTavern's
chat metadata, each message's name, flags and `extra`), kept verbatim as JSON
so an export gives it back."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from omoide.store.db import Database


class ExchangeRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def save(self, chat_id: int, chat: Mapping[str, Any] | None, messages: Mapping[int, Mapping[str, Any]]) -> None:
        rows: list[tuple[int, int | None, str]] = []
        if chat:
            rows.append((chat_id, None, json.dumps(chat, ensure_ascii=False)))
        rows += [(chat_id, message_id, json.dumps(data, ensure_ascii=False)) for message_id, data in messages.items() if data]
        async with self.db.write() as conn:
            await conn.executemany("INSERT OR REPLACE INTO exchange_meta (chat_id, message_id, data) VALUES (?, ?, ?)", rows)

    async def chat(self, chat_id: int) -> dict[str, Any]:
        row = await self.db.one("SELECT data FROM exchange_meta WHERE chat_id = ? AND message_id IS NULL", (chat_id,))
        return _load(row[0]) if row else {}

    async def messages(self, chat_id: int) -> dict[int, dict[str, Any]]:
        rows = await self.db.all("SELECT message_id, data FROM exchange_meta WHERE chat_id = ? AND message_id IS NOT NULL", (chat_id,))
        return {int(r[0]): _load(r[1]) for r in rows}

    async def message_ids(self, chat_id: int) -> list[int]:
        """The chat's message ids in the order they were stored (an import's node order)."""
        return [int(r[0]) for r in await self.db.all("SELECT id FROM messages WHERE chat_id = ? ORDER BY id", (chat_id,))]


def _load(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}
