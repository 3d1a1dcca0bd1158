"""Putting the parts together for a client: settings, store, character,
backends, session. The CLI and the benchmarks use it; the TUI receives its result."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from omoide.characters.library import default_character, find_character
from omoide.characters.model import Character
from omoide.config import Settings, load_settings
from omoide.events import MemoryEvent
from omoide.llm.base import Backend
from omoide.llm.factory import make_backend
from omoide.session import ChatSession
from omoide.store import Store


def make_summarizer(settings: Settings, chat_backend: Backend) -> Backend:
    """The compression backend: the chat's own unless summary_* settings name another."""
    summary_settings = settings.summarizer()
    return chat_backend if summary_settings is settings else make_backend(summary_settings)


@dataclass
class Runtime:
    settings: Settings
    store: Store
    backend: Backend
    summarizer: Backend

    @classmethod
    async def start(cls, settings: Settings | None = None) -> Runtime:
        settings = settings or load_settings()
        store = await Store.open(synchronous=settings.synchronous)
        try:
            backend = make_backend(settings)
            summarizer = make_summarizer(settings, backend)
        except BaseException:
            await store.close()
            raise
        return cls(settings, store, backend, summarizer)

    def character(self, name: str | None) -> Character:
        return find_character(name) if name else default_character()

    async def session(
        self,
        character: Character,
        *,
        chat_id: int | None = None,
        new: bool = False,
        on_memory_event: Callable[[MemoryEvent], None] | None = None,
    ) -> ChatSession:
        return await ChatSession.open(
            self.store, character, self.settings, self.backend,
            chat_id=chat_id, new=new, summarizer=self.summarizer, on_memory_event=on_memory_event,
        )

    async def aclose(self) -> None:
        for backend in {id(self.backend): self.backend, id(self.summarizer): self.summarizer}.values():
            try:
                await backend.aclose()
            except Exception:  # closing must never mask the real outcome
                pass
        await self.store.close()
