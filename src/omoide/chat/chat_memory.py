"""The weighing side of one chat's memory, for the session: what the
character asks to remember (importance, emotion, facts about the user), which
memories a message brings up again, their strengths for the prompt, recall,
and the tiers /amnesia hides."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from datetime import datetime

from omoide.config.sections import MemorySettings
from omoide.domain.chat import Chat, DiaryAuthor, MemoryState, Message
from omoide.domain.witness import Reader
from omoide.errors import CommandError
from omoide.chat.events import DiarySaved, ProfileLearned, TurnEvent
from omoide.memory.diary import MemoryNote, cap_entry, clean_entry
from omoide.memory.recall import Recalled, recall
from omoide.memory.weights import DEFAULT_IMPORTANCE, memo_strengths, memo_text, mentioned, strengths
from omoide.world.profile import ProfileBook
from omoide.store import Store

log = logging.getLogger(__name__)

AMNESIA_TIERS = ("diary", "summary", "memos", "world", "profile", "pinned", "corrections", "passages")
"""What /amnesia can hide from a chat's prompt."""


class ChatMemory:
    def __init__(self, store: Store, chat: Chat, settings: MemorySettings, *, character_id: str) -> None:
        self.store = store
        self.chat_id = chat.id
        self.settings = settings
        self.character_id = character_id
        self.profile = ProfileBook(store, settings.profile_learning)

    async def save_note(self, message_id: int, note: MemoryNote, author: DiaryAuthor = DiaryAuthor.CHARACTER) -> list[TurnEvent]:
        """A diary entry at `message_id` (with the default importance when none
        was given); a note about the user goes to the profile as well."""
        content, cut_from = cap_entry(clean_entry(note.content))
        if not content:
            return []
        if cut_from is not None:
            log.warning("a diary entry of %d characters was cut to %d", cut_from, len(content))
        entry = await self.store.memory.add_diary_entry(
            self.chat_id, message_id, content, author, importance=note.importance or DEFAULT_IMPORTANCE, emotion=note.emotion,
        )
        events: list[TurnEvent] = [DiarySaved(entry)]
        if note.about_user and author is DiaryAuthor.CHARACTER:
            speaker = entry.owner or self.character_id  # in a group scene: whoever learned it
            learned = await self.profile.learn(content, character=speaker, chat_id=self.chat_id, message_id=message_id)
            if learned.fact is not None:
                events.append(ProfileLearned(learned.fact, learned.accepted))
        return events

    async def note_mentions(self, message: Message, state: MemoryState, names: Sequence[str]) -> list[int]:
        """Record which diary entries and memos in force `message` brings up again
        (not the ones made at it); returns the diary entries' ids."""
        diary = [(e.memory_id, e.content) for e in state.diary if e.message_id != message.id and not e.compressed]
        ids = mentioned(message.content, diary, exclude=names)
        await self.store.mentions.add(self.chat_id, message.id, "diary", ids)
        memos = [(m.id, memo_text(m)) for m in [*state.memos, *state.new_memos] if m.anchor_id != message.id and not m.gap]
        await self.store.mentions.add(self.chat_id, message.id, "memo", mentioned(message.content, memos, exclude=names))
        return ids

    async def strengths(self, head_id: int, state: MemoryState, now: datetime) -> tuple[dict[int, float], dict[int, float]]:
        """Strength of every diary entry in force, and of every memo, from one read
        of the mentions on the path. The stable diary block's are taken at its
        checkpoint's time, so its selection (and the prompt cache) holds until the
        next compression; the new entries' and the memos' are taken now (memos are
        not selected by it)."""
        memos = [*state.memos, *state.new_memos]
        in_force = {"diary": {e.memory_id for e in state.diary}, "memo": {m.id for m in memos}}
        mentions = await self.store.mentions.at(head_id, only=in_force)
        half_life = self.settings.half_life_days
        checkpoint = state.summary.created_at if state.summary else now
        diary = {
            **strengths(state.stable_diary, mentions, now=checkpoint, half_life_days=half_life),
            **strengths(state.new_diary, mentions, now=now, half_life_days=half_life),
        }
        return diary, memo_strengths(memos, mentions, now=now, half_life_days=half_life)

    async def recall(self, head_id: int, query: str, state: MemoryState, *, now: datetime, names: tuple[str, str],
                     hidden: Sequence[str], reader: Reader | None = None,
                     speakers: Mapping[str, str] | None = None) -> list[Recalled]:
        """Recall on the path to `head_id` (whose memory is `state`), leaving out the
        recent messages every prompt holds, within what /amnesia leaves: old
        messages belong to the summary's tier, diary entries to the diary's. In a
        scene, `reader` keeps to what the speaker witnessed."""
        recent = state.window[-self.settings.recent_messages :]
        return await recall(
            self.store, self.chat_id, head_id, query, now=now, half_life_days=self.settings.half_life_days,
            names=names, skip=[m.id for m in recent], messages="summary" not in hidden, diary="diary" not in hidden,
            reader=reader, speakers=speakers,
        )

    async def set_amnesia(self, tiers: Sequence[str]) -> Chat:
        """Hide `tiers` from this chat's prompt (none: bring everything back)."""
        wanted = [t.strip().lower() for t in tiers if t.strip()]
        if "all" in wanted:
            wanted = list(AMNESIA_TIERS)
        unknown = [t for t in wanted if t not in AMNESIA_TIERS]
        if unknown:
            raise CommandError(f"'{unknown[0]}' is not a memory tier /amnesia can hide.",
                               f"Tiers: {', '.join(AMNESIA_TIERS)} (or all). /amnesia off brings them back.")
        return await self.store.chats.set_amnesia(self.chat_id, list(dict.fromkeys(wanted)))
