"""Reading and editing world memory, for clients (CLI, TUI) that hold no store.

A session has one as `session.world.book`; `Directory` names the characters."""

from __future__ import annotations

from omoide.store import Store
from omoide.world import edits
from omoide.domain.world import Conversation, Field, Update, WorldView


class WorldBook:
    def __init__(self, store: Store, names: dict[str, str]) -> None:
        self._store = store
        self.names = names
        """Character id -> display name, for showing `about` keys."""

    async def view(self, owner: str) -> WorldView:
        return await self._store.world.view(owner)

    async def pending(self, owner: str) -> int:
        """Conversations in force whose pass has not run to the end."""
        return sum(1 for c in await self._store.world.conversations(owner=owner, unfinished=True) if c.in_force)

    async def log(self, owner: str, limit: int = 50) -> list[tuple[Conversation, list[Update]]]:
        """The owner's conversations, newest first, each with the owner's updates, oldest first."""
        rows = []
        for conversation in await self._store.world.conversations(owner=owner, limit=limit):
            self.names.update({p.key: p.name for p in conversation.participants})
            rows.append((conversation, await self._store.world.updates(conversation_id=conversation.id, owner=owner)))
        return rows

    async def edits(self, owner: str) -> list[Update]:
        return await self._store.world.edits(owner)

    async def edit(self, owner: str, about: str, name: Field, text: str) -> Update | None:
        return await edits.edit(self._store, owner, about, name, text)
