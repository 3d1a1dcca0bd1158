"""What the story's own words bring back to a turn's prompt: your corrections
on the path, however old, and the memories that come to mind (memory/passages.py)
for the speaker, within what it witnessed."""

from __future__ import annotations

from datetime import datetime

from omoide.characters.model import Character
from omoide.chat.scene import ChatScene
from omoide.chat.state import ChatState
from omoide.config.settings import Settings
from omoide.domain.chat import MemoryState
from omoide.domain.witness import Reader
from omoide.llm import static_embeddings
from omoide.llm.base import Backend
from omoide.llm.embeddings import Embed, ServerEmbeddings
from omoide.memory.corrections import CUES, Correction, correction
from omoide.memory.meaning import MeaningIndex
from omoide.memory.passage import Passage, Voices
from omoide.memory.passages import come_to_mind


class StoryWords:
    def __init__(self, state: ChatState, settings: Settings, scene: ChatScene, backend: Backend) -> None:
        self.state = state
        self.store = state.store
        self.settings = settings
        self.scene = scene
        self.backend = backend
        """The chat's backend (its server may weigh passages by meaning)."""
        self._corrections_read: tuple[int, int] = (0, 0)
        """(chat, the newest message id) read so far for corrections."""
        self._corrections_found: dict[int, Correction] = {}
        """The corrections in that chat up to there, of every branch, by message id."""
        self._meaning: MeaningIndex | None = None
        """The chat's message vectors, when static embeddings are installed (memory/meaning.py)."""

    async def corrections(self, head_id: int) -> list[Correction]:
        """Your corrections on the path to `head_id`, oldest first, however long
        ago. Your messages are never rewritten, so each is read for one once a
        session: a turn reads only those newer than the last it read."""
        chat_id = self.state.chat_id
        if self._corrections_read[0] != chat_id:
            self._corrections_read, self._corrections_found = (chat_id, 0), {}
        newer = await self.store.recall.said_with(chat_id, CUES, after=self._corrections_read[1])
        if newer:  # two turns reading at once (a warm-up) find the same rows: kept once, by id
            self._corrections_read = (chat_id, max(self._corrections_read[1], newer[0][0]))
            self._corrections_found |= {fix.message_id: fix for row in newer if (fix := correction(*row)) is not None}
        return [fix for _, fix in sorted(self._corrections_found.items())
                if await self.store.messages.is_ancestor(fix.message_id, head_id)]

    @property
    def embed(self) -> Embed | None:
        """What weighs the best passages by meaning: the backend's server (/v1/embeddings),
        if it has one. Not the static vectors: a word average weighs a sentence that
        names the thing asked about below one that merely sounds like the question."""
        if not self.settings.memory.recall_passages_meaning:
            return None
        source = getattr(self.backend, "embeddings", None)
        return source.embed if isinstance(source, ServerEmbeddings) else None

    @property
    def meaning(self) -> MeaningIndex | None:
        """What finds passages by meaning as well as by words: the chat's message vectors (static embeddings)."""
        if not self.settings.memory.recall_passages_meaning or not static_embeddings.available():
            return None
        if self._meaning is None or self._meaning.chat_id != self.state.chat_id:
            self._meaning = MeaningIndex(self.store, self.state.chat_id)
        return self._meaning

    async def settled(self) -> None:
        """Until the message vectors caught up in the background (a long or imported chat's) are made."""
        if self._meaning is not None:
            await self._meaning.settled()

    async def aclose(self) -> None:
        if self._meaning is not None:
            await self._meaning.aclose()

    async def passages(self, head_id: int, state: MemoryState, speaker: Character, reader: Reader | None,
                       now: datetime, taken: int = 0) -> list[Passage]:
        """Memories that come to mind for `speaker` at `head_id`: none in memory_style
        'none' (the window alone, a real baseline) unless they are plain retrieval (the
        check's baseline), with recall_passages = 0, or under /amnesia. `taken`: the tokens the
        other memory layers take (the passages fill what memory_percent leaves)."""
        memory = self.settings.memory
        if (memory.style == "none" and not memory.recall_passages_plain) or "passages" in self.state.chat.amnesia:
            return []
        facts = self.scene.facts(speaker)
        voices = Voices(self.state.user_name, speaker.display_name, me=facts.me if facts else None,
                        host=facts.host if facts else "", names=facts.names if facts else None)
        return await come_to_mind(self.store, self.state.chat_id, head_id, state.window, voices=voices, now=now,
                                  half_life_days=memory.half_life_days, limit=memory.recall_passages,
                                  token_budget=memory.passages_budget(self.settings.backend.context_size, taken),
                                  reader=reader, embed=self.embed, meaning=self.meaning, plain=memory.recall_passages_plain)
