"""Chats: creating, finding, renaming, archiving, and moving a chat's head."""

from __future__ import annotations

from collections.abc import Sequence

from omoide.domain.chat import Chat, Role
from omoide.errors import NotFound, StoreError
from omoide.store import rows
from omoide.store.db import Database
from omoide.store.messages import ImportNode, insert_message

_SELECT = (
    "SELECT c.*, (SELECT depth + 1 FROM messages WHERE id = c.head_id) AS message_count, "
    "(SELECT group_concat(character, char(31)) FROM "
    "(SELECT character FROM chat_participants WHERE chat_id = c.id ORDER BY position)) AS cast_ids FROM chats c"
)


class ChatRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def create(self, character: str, *, title: str = "", greeting: str | None = None,
                     alternate_greetings: Sequence[str] = ()) -> Chat:
        """A new chat; its first message, when given, is the character's greeting,
        and alternate greetings become its swipes (sibling roots)."""
        greetings = [greeting, *alternate_greetings] if greeting is not None else []
        nodes = [ImportNode(None, Role.ASSISTANT, text) for text in greetings]
        return await self.import_tree(character, title, nodes, 0 if nodes else None)

    async def import_tree(self, character: str, title: str, nodes: Sequence[ImportNode], head_index: int | None) -> Chat:
        """Create a chat holding a whole message tree in one transaction: a failed
        import leaves nothing behind. `nodes` are in parent-before-child order."""
        stamp = self.db.now_iso()
        async with self.db.write() as conn:
            cur = await conn.execute(
                "INSERT INTO chats (character, title, created_at, updated_at) VALUES (?, ?, ?, ?)",
                (character, title, stamp, stamp),
            )
            chat_id = cur.lastrowid
            assert chat_id is not None
            ids: list[int] = []
            for node in nodes:
                parent = ids[node.parent] if node.parent is not None else None
                ids.append(await insert_message(
                    conn, chat_id, parent, node.role, node.content, node.status, None, None,
                    node.created_at or stamp, speaker=node.speaker,
                ))
            if head_index is not None and ids:
                await conn.execute("UPDATE chats SET head_id = ? WHERE id = ?", (ids[head_index], chat_id))
        return await self.get(chat_id)

    async def get(self, chat_id: int) -> Chat:
        row = await self.db.one(f"{_SELECT} WHERE c.id = ?", (chat_id,)) if 0 < chat_id < 2**63 else None
        if row is None:
            raise NotFound(f"There is no chat #{chat_id}.", "`omoide chats` lists the chats there are.")
        return rows.chat(row)

    async def latest(self, character: str) -> Chat | None:
        row = await self.db.one(
            f"{_SELECT} WHERE c.character = ? AND c.archived = 0 ORDER BY c.updated_at DESC, c.id DESC LIMIT 1",
            (character,),
        )
        return rows.chat(row) if row else None

    async def list(self, character: str | None = None, *, include_archived: bool = False) -> list[Chat]:
        where: list[str] = []
        params: list[object] = []
        if character is not None:
            where.append("c.character = ?")
            params.append(character)
        if not include_archived:
            where.append("c.archived = 0")
        clause = f" WHERE {' AND '.join(where)}" if where else ""
        result = await self.db.all(f"{_SELECT}{clause} ORDER BY c.updated_at DESC, c.id DESC", params)
        return [rows.chat(r) for r in result]

    async def rename(self, chat_id: int, title: str) -> Chat:
        await self.get(chat_id)
        async with self.db.write() as conn:
            await conn.execute("UPDATE chats SET title = ?, updated_at = ? WHERE id = ?", (title.strip(), self.db.now_iso(), chat_id))
        return await self.get(chat_id)

    async def archive(self, chat_id: int, archived: bool = True) -> Chat:
        await self.get(chat_id)
        async with self.db.write() as conn:
            await conn.execute("UPDATE chats SET archived = ? WHERE id = ?", (int(archived), chat_id))
        return await self.get(chat_id)

    async def set_persona(self, chat_id: int, persona: str | None) -> Chat:
        async with self.db.write() as conn:
            await conn.execute("UPDATE chats SET persona = ? WHERE id = ?", (persona, chat_id))
        return await self.get(chat_id)

    async def set_amnesia(self, chat_id: int, tiers: Sequence[str]) -> Chat:
        async with self.db.write() as conn:
            await conn.execute("UPDATE chats SET amnesia = ? WHERE id = ?", (",".join(tiers) or None, chat_id))
        return await self.get(chat_id)

    async def set_head(self, chat_id: int, message_id: int) -> None:
        row = await self.db.one("SELECT chat_id FROM messages WHERE id = ?", (message_id,)) if 0 < message_id < 2**63 else None
        if row is None:
            raise NotFound(f"There is no message #{message_id}.", "`/goto #ID` takes a message number from this chat.")
        if row[0] != chat_id:
            raise StoreError(f"Message #{message_id} belongs to another chat.", "Pick a message from this chat.")
        async with self.db.write() as conn:
            await conn.execute("UPDATE chats SET head_id = ?, updated_at = ? WHERE id = ?", (message_id, self.db.now_iso(), chat_id))
