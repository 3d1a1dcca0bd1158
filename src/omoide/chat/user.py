"""You in one chat: who you are here (your name, /persona) and your hand on
the character's memory (/remember, /recall, /amnesia)."""

from __future__ import annotations

from collections.abc import Mapping

from omoide.characters.model import Character
from omoide.chat.chat_memory import ChatMemory
from omoide.chat.state import ChatState
from omoide.config.settings import Settings
from omoide.domain.chat import DiaryAuthor, DiaryEntry, MemoryState
from omoide.domain.witness import Reader
from omoide.errors import CommandError
from omoide.memory.book import memory_state
from omoide.memory.recall import Recalled
from omoide.memory.weights import DEFAULT_IMPORTANCE
from omoide.memory.worker import MemoryWorker
from omoide.world import identity
from omoide.chat.tavern import available_personas


class ChatUser:
    def __init__(self, state: ChatState, settings: Settings, character: Character, worker: MemoryWorker,
                 weights: ChatMemory) -> None:
        self.state = state
        self.store = state.store
        self.settings = settings
        self.character = character
        self.worker = worker
        self.weights = weights
        self.pending_recall: list[Recalled] = []
        """Moments brought back with /recall, for the next prompt's tail (in a scene,
        the speaker's prompt takes those it witnessed)."""

    @property
    def name(self) -> str:
        return self.state.user_name

    @property
    def persona(self) -> str:
        return self.state.user_persona

    # -- personas -------------------------------------------------------------------

    def personas(self) -> dict[str, str]:
        """Every persona you can be: the default ([user] name), those imported from
        SillyTavern (`omoide personas import`) and the configured ones."""
        return available_personas(self.settings)

    async def set_persona(self, name: str) -> tuple[str, str]:
        """Talk as another persona in this chat from now on (remembered for the chat)."""
        choices = self.personas()
        match = next((n for n in choices if n.lower() == name.strip().lower()), None)
        if match is None:
            raise CommandError(
                f"There is no persona named '{name}'.",
                f"Personas: {', '.join(choices)}. Add more under [personas] in the config file, "
                "or import SillyTavern's with `omoide personas import`.",
            )
        self.state.user_name, self.state.user_persona = match, choices[match]
        self.worker.user_name = match
        stored = None if match == self.settings.user.name else match
        self.state.chat = await self.store.chats.set_persona(self.state.chat_id, stored)
        return self.state.user_name, self.state.user_persona

    async def rename_user(self, name: str) -> str:
        """You are `name` from now on: in your profile (the one place that says who
        you are), in every chat, and in this chat's greeting if nobody has written yet."""
        name = await identity.rename(self.store, self.settings, name)
        if self.state.chat.persona is None:
            self.state.user_name = self.worker.user_name = name
            await identity.refill_greeting(self.store, self.state.chat, self.character, name)
        return name

    # -- memory ---------------------------------------------------------------------

    async def remember(self, text: str, *, importance: int | None = None) -> DiaryEntry:
        text = text.strip()
        if not text:
            raise CommandError("/remember needs something to remember.", "Usage: /remember [!] [--importance 1-5] TEXT")
        chat = await self.state.refresh()
        if chat.head_id is None:
            raise CommandError("The chat is empty.", "Send a message first.")
        return await self.store.memory.add_diary_entry(chat.id, chat.head_id, text, DiaryAuthor.USER, importance=importance or DEFAULT_IMPORTANCE)

    async def recall(self, text: str) -> list[Recalled]:
        """/recall: bring past moments matching `text` into the next prompt."""
        chat = await self.state.refresh()
        if not text.strip() or chat.head_id is None:
            raise CommandError("/recall needs words to look for, in a chat that has begun.", "Usage: /recall the night at the lighthouse")
        found = await self.recall_at(chat.head_id, text, await memory_state(self.store, self.settings.memory, chat.head_id))
        self.pending_recall = found
        return found

    async def recall_at(self, head_id: int, query: str, state: MemoryState, *, reader: Reader | None = None,
                        speakers: Mapping[str, str] | None = None) -> list[Recalled]:
        """What /recall (or the character's recall tool) finds on the path to `head_id`;
        with `reader` (a speaker in a scene), only what that character witnessed."""
        names = (self.state.user_name, self.character.display_name)
        return await self.weights.recall(head_id, query, state, now=self.state.clock(), names=names, hidden=self.state.chat.amnesia,
                                         reader=reader, speakers=speakers)

    async def set_amnesia(self, tiers: list[str]) -> tuple[str, ...]:
        """/amnesia TIER... hides memory tiers from this chat's prompt; no tiers: all back."""
        self.state.chat = await self.weights.set_amnesia(tiers)
        return self.state.chat.amnesia
