"""Your hand on the memory: your name and personas, /remember, /recall, /amnesia. Part of
ChatSession (a mixin: it uses the session's store, settings, chat, character,
memory worker and weights)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING

from omoide import identity
from omoide.characters.model import Character
from omoide.config import Settings
from omoide.domain import Chat, DiaryAuthor, DiaryEntry, MemoryState
from omoide.errors import CommandError
from omoide.memory.book import memory_state
from omoide.memory.chatmemory import ChatMemory
from omoide.memory.recall import Recalled
from omoide.memory.weights import DEFAULT_IMPORTANCE
from omoide.memory.worker import MemoryWorker
from omoide.store import Store


class UserMemory:
    store: Store
    settings: Settings
    chat: Chat
    character: Character
    user_name: str
    user_persona: str
    memory_worker: MemoryWorker
    weights: ChatMemory
    pending_recall: list[str]
    clock: Callable[[], datetime]

    if TYPE_CHECKING:
        async def refresh(self) -> Chat: ...

    # -- personas -------------------------------------------------------------------

    def personas(self) -> dict[str, str]:
        """Every persona you can be: the default (user_name) and the configured ones."""
        return {self.settings.user_name: self.settings.user_persona, **self.settings.personas}

    async def set_persona(self, name: str) -> tuple[str, str]:
        """Talk as another persona in this chat from now on (remembered for the chat)."""
        choices = self.personas()
        match = next((n for n in choices if n.lower() == name.strip().lower()), None)
        if match is None:
            raise CommandError(
                f"There is no persona named '{name}'.",
                f"Personas: {', '.join(choices)}. Add more under [personas] in the config file.",
            )
        self.user_name, self.user_persona = match, choices[match]
        self.memory_worker.user_name = match
        stored = None if match == self.settings.user_name else match
        self.chat = await self.store.chats.set_persona(self.chat.id, stored)
        return self.user_name, self.user_persona

    async def rename_user(self, name: str) -> str:
        """You are `name` from now on: in your profile (the one place that says who
        you are), in every chat, and in this chat's greeting if nobody has written yet."""
        name = await identity.rename(self.store, self.settings, name)
        if self.chat.persona is None:
            self.user_name = self.memory_worker.user_name = name
            await identity.refill_greeting(self.store, self.chat, self.character, name)
        return name

    # -- memory ---------------------------------------------------------------------

    async def remember(self, text: str, *, importance: int | None = None) -> DiaryEntry:
        text = text.strip()
        if not text:
            raise CommandError("/remember needs something to remember.", "Usage: /remember [!] [--importance 1-5] TEXT")
        chat = await self.refresh()
        if chat.head_id is None:
            raise CommandError("The chat is empty.", "Send a message first.")
        return await self.store.memory.add_diary_entry(chat.id, chat.head_id, text, DiaryAuthor.USER, importance=importance or DEFAULT_IMPORTANCE)

    async def recall(self, text: str) -> list[Recalled]:
        """/recall: bring past moments matching `text` into the next prompt."""
        chat = await self.refresh()
        if not text.strip() or chat.head_id is None:
            raise CommandError("/recall needs words to look for, in a chat that has begun.", "Usage: /recall the night at the lighthouse")
        found = await self._recall_at(chat.head_id, text, await memory_state(self.store, self.settings, chat.head_id))
        self.pending_recall = [r.line() for r in found]
        return found

    async def _recall_at(self, head_id: int, query: str, state: MemoryState) -> list[Recalled]:
        names = (self.user_name, self.character.display_name)
        return await self.weights.recall(head_id, query, state, now=self.clock(), names=names, hidden=self.chat.amnesia)

    async def set_amnesia(self, tiers: list[str]) -> tuple[str, ...]:
        """/amnesia TIER... hides memory tiers from this chat's prompt; no tiers: all back."""
        self.chat = await self.weights.set_amnesia(tiers)
        return self.chat.amnesia
