"""Putting the parts together for a client. `Workspace`: settings, the store and
the characters, which is all that commands never talking to a model open
(`chats`, `export`, `search` ...). `Runtime`: a workspace with the chat and
compression backends, for `chat`, `say` and the benchmarks. The TUI receives
the session a runtime opens."""

from __future__ import annotations

import functools
import sys

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from omoide.world import identity
from omoide.characters.library import Library
from omoide.chat.library import open_library
from omoide.characters.model import Character
from omoide.config.settings import Settings, load_settings
from omoide.memory.events import MemoryEvent
from omoide.llm.base import Backend
from omoide.llm.factory import make_backend
from omoide.chat.session import ChatSession
from omoide.store import Store


def make_summarizer(settings: Settings, chat_backend: Backend) -> Backend:
    """The compression backend: the chat's own unless summary_* settings name another."""
    summary_settings = settings.summarizer_settings()
    return chat_backend if summary_settings is settings else make_backend(summary_settings)


@dataclass
class Workspace:
    settings: Settings
    store: Store

    @classmethod
    async def open(cls, settings: Settings | None = None) -> Workspace:
        """The settings and the store, and no backend: nothing here reaches for a model."""
        settings = settings or load_settings()
        store = await Store.open(synchronous=settings.store.synchronous)
        try:
            settings = await identity.resolve(settings, store)  # the profile's name is who you are
        except BaseException:
            await store.close()
            raise
        return cls(settings, store)

    @functools.cached_property
    def library(self) -> Library:
        return open_library(self.store)

    def character(self, name: str | None) -> Character:
        """The character a command names (an ambiguous name is explained on stderr)."""
        return self.library.find(name, notice=_tell) if name else self.library.default()

    async def aclose(self) -> None:
        if "library" in self.__dict__:
            self.library.close()
        await self.store.close()


@dataclass
class Runtime(Workspace):
    backend: Backend
    summarizer: Backend

    @classmethod
    async def start(cls, settings: Settings | None = None) -> Runtime:
        workspace = await Workspace.open(settings)
        try:
            backend = make_backend(workspace.settings)
            summarizer = make_summarizer(workspace.settings, backend)
        except BaseException:
            await workspace.aclose()
            raise
        return cls(workspace.settings, workspace.store, backend, summarizer)

    async def session(
        self,
        character: Character,
        *,
        chat_id: int | None = None,
        new: bool = False,
        on_memory_event: Callable[[MemoryEvent], None] | None = None,
        others: Sequence[Character] = (),
    ) -> ChatSession:
        return await ChatSession.open(
            self.store, character, self.settings, self.backend,
            chat_id=chat_id, new=new, summarizer=self.summarizer, on_memory_event=on_memory_event, others=others,
        )

    async def aclose(self) -> None:
        for backend in {id(self.backend): self.backend, id(self.summarizer): self.summarizer}.values():
            try:
                await backend.aclose()
            except Exception:  # closing must never mask the real outcome
                pass
        await super().aclose()


def _tell(message: str) -> None:
    from omoide.safe_text import inert

    print(inert(message), file=sys.stderr)  # card names are untrusted text


def storage_warnings(session: ChatSession) -> list[str]:
    """What is wrong with the chat's database though it opened: a damaged
    write-ahead log found at an open (store/wal.py), said until its copy is moved away."""
    from omoide.store.wal import kept_damage

    return kept_damage(session.store.path)
