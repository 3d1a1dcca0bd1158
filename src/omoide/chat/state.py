"""The chat one session works on, shared by the session's parts: its row as
last read, the head as this session left it, and who you are in it.

Another window (a second TUI, `omoide say`) may write in the same chat, so the
head in the store can differ from `own_head`: a client compares the two to
see that, and accepts the other window's head once it has shown it.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timezone

from omoide.domain.chat import Chat, Message
from omoide.store import Store


class ChatState:
    def __init__(self, store: Store, chat: Chat, *, user_name: str, user_persona: str) -> None:
        self.store = store
        self.chat = chat
        self.own_head: int | None = chat.head_id
        """The head as this session last left it."""
        self.user_name = user_name
        """Who you are in this chat: the persona's name ({{user}})."""
        self.user_persona = user_persona
        """What the characters know about you from the start."""
        self.clock: Callable[[], datetime] = lambda: datetime.now(timezone.utc)
        """The chat's now (tests and benchmarks set their own)."""

    @property
    def chat_id(self) -> int:
        return self.chat.id

    async def refresh(self) -> Chat:
        self.chat = await self.store.chats.get(self.chat.id)
        return self.chat

    async def head(self) -> Message | None:
        chat = await self.refresh()
        return await self.store.messages.get(chat.head_id) if chat.head_id else None

    async def move_head(self, message_id: int) -> Chat:
        """Make `message_id` the head, ours."""
        await self.store.chats.set_head(self.chat.id, message_id)
        chat = await self.refresh()
        self.own_head = chat.head_id
        return chat

    async def stored_head(self) -> int | None:
        """The chat's head in the store now (another window may have moved it)."""
        return (await self.store.chats.get(self.chat.id)).head_id
