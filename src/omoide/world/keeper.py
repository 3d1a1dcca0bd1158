"""When a conversation ends, and what happens then, in the background.

A conversation is the stretch of a chat's path since the previous
conversation's end (or the start). It ends:

- when the user says so (`/end`, `omoide end CHARACTER`);
- on its own when the chat was left idle for `world_idle_hours` after at least
  `world_min_messages` new messages: checked before the next message of that
  chat is stored (that message then opens a new conversation), and for every
  chat after the first reply of any session.

The pass then runs in the background (replies first: see gate.py). A pass
that failed somewhere, or was cut off by quitting, is run again by the same
sweep, up to MAX_ATTEMPTS times, skipping what was already applied.

Branches: world memory follows each chat's current path; `WorldBranches`
(branches.py) retracts and reinstates what a conversation changed.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta, timezone
from typing import Any

from omoide.characters.model import Character
from omoide.config.sections import WorldSettings
from omoide.domain.chat import Chat, Message, Role
from omoide.domain.world import Conversation, Participant, user_key
from omoide.errors import NothingYet, OmoideError
from omoide.llm.base import Backend
from omoide.memory.events import MemoryEvent, MemoryWorkDone, MemoryWorkFailed, MemoryWorkStarted
from omoide.memory.shared import ChatPrefix, Continuing
from omoide.store import Store
from omoide.world.book import WorldBook
from omoide.world.boundary import continues, witnessed_by
from omoide.world.branches import WorldBranches
from omoide.world.conversation import ConversationPass, PassResult
from omoide.world.directory import Directory, speaker_for
from omoide.world.gate import ReplyGate
from omoide.world.mentions import MentionScanner, words_of
from omoide.world.prompt import mention_note, world_block

log = logging.getLogger(__name__)

RANGE_CAP = 400
"""Most messages a pass reads (the newest of the conversation)."""
MAX_ATTEMPTS = 5
MENTION_DEPTH = 4
"""Recent messages scanned for absent characters' names, for the hidden mention notes."""


class WorldKeeper:
    def __init__(
        self, store: Store, settings: WorldSettings, backend: Backend, *, user_name: str, context_size: int,
        directory: Directory | None = None, gate: ReplyGate | None = None, emit: Callable[[MemoryEvent], None] | None = None,
        own_words: bool = False,
    ) -> None:
        self.own_words = own_words
        """The passes keep the story's own words, with no model call (memory_writer)."""
        self.store = store
        self.settings = settings
        self.backend = backend
        self.user_name = user_name
        """Who the user is where a chat names no persona."""
        self.context_size = context_size
        """The backend's context window: a pass continuing the chat's prompt must fit it."""
        self.directory = directory or Directory()
        self.gate = gate or ReplyGate()
        self.emit = emit or (lambda event: None)
        self.lock = asyncio.Lock()
        self.branches = WorldBranches(store, settings, self.lock, schedule=lambda conv_id: self.schedule(conv_id))
        self.clock: Callable[[], datetime] = lambda: datetime.now(timezone.utc)
        self._tasks: set[asyncio.Task[None]] = set()
        self._running: set[int] = set()
        self.last_result: PassResult | None = None
        self._book: WorldBook | None = None
        self.needs_retry = False
        """A pass failed somewhere: the next sweep (after the next reply) runs it again."""
        self.prefix: tuple[int, ChatPrefix] | None = None
        """(chat id, its prompt as it now stands) when the pass shares the chat's backend:
        that chat's passes continue its prompt, so its cached prefix survives them."""

    @property
    def book(self) -> WorldBook:
        """Reading and editing world memory, for clients."""
        if self._book is None:
            self._book = WorldBook(self.store, {k.key: k.name for k in self.directory.known()})
        return self._book

    # -- the range and the end ---------------------------------------------------------

    async def open_range(self, chat: Chat, head_id: int | None = None) -> list[Message]:
        """The messages of the conversation running at `head_id` (default: the head), oldest first."""
        head = head_id if head_id is not None else chat.head_id
        if head is None:
            return []
        return await self.store.messages.path(head, limit=RANGE_CAP, stop_before=await self._last_end(chat, head))

    async def open_start(self, chat: Chat, head_id: int) -> int | None:
        """The first message of `open_range` (what a turn needs of it), without reading the range."""
        return await self.store.messages.path_start(head_id, limit=RANGE_CAP, stop_before=await self._last_end(chat, head_id))

    async def _last_end(self, chat: Chat, head_id: int) -> int | None:
        """Where the last conversation in force on the path to `head_id` ended."""
        ended = [c for c in await self.store.world.conversations(chat_id=chat.id) if c.in_force]
        on_path = await self.store.world.ends_on_path(head_id, [c.end_id for c in ended])
        return next((c.end_id for c in ended if c.end_id in on_path), None)

    async def end(self, chat: Chat, participants: list[Participant], *, reason: str = "user",
                  head_id: int | None = None) -> Conversation:
        """Record the end of the running conversation; the caller runs or schedules the pass."""
        messages = await self.open_range(chat, head_id)
        if not any(m.role is Role.USER for m in messages):
            names = " and ".join(p.name for p in participants if not p.is_user) or chat.character
            raise NothingYet(
                f"Nothing was said to {names} since the last conversation ended.",
                f"Talk to {names} first (`omoide chat {chat.character}`); the end of a conversation is when they remember it.",
            )
        scanner = MentionScanner(self.directory.known_among(words_of(messages)), [p.key for p in participants])
        mentions = scanner.mentions(messages)
        return await self.store.world.add_conversation(
            chat.id, messages[0].id, messages[-1].id, participants, mentions, reason
        )

    async def idle_end(self, chat: Chat, participants: list[Participant] | None = None) -> Conversation | None:
        """End the chat's running conversation if it has been idle long enough."""
        hours = self.settings.idle_hours
        if hours <= 0 or chat.head_id is None:
            return None
        head = await self.store.messages.get(chat.head_id)
        if self.clock() - head.created_at < timedelta(hours=hours):
            return None
        messages = await self.open_range(chat)
        said = [m for m in messages if m.role in (Role.USER, Role.ASSISTANT) and m.content.strip() and m.parent_id is not None]
        if len(said) < self.settings.min_messages or not any(m.role is Role.USER for m in said):
            return None
        if participants is None:
            participants = await self._participants(chat)
            if participants is None:
                return None
        return await self.end(chat, participants, reason="idle")

    async def _participants(self, chat: Chat) -> list[Participant] | None:
        """Who is in `chat` at its head: its character, or in a group scene everyone
        present (read from the stage notes on the path); and the user."""
        user = chat.persona or self.user_name
        present = await self.store.scenes.present(chat, chat.head_id)
        found = [(key, self.directory.get(key)) for key in present]
        characters = [Participant(key, c.display_name) for key, c in found if c is not None]
        return [*characters, Participant(user_key(user), user)] if characters else None

    async def end_if_idle(self, chat: Chat, participants: list[Participant]) -> None:
        """Before a message is stored: end an idle conversation and remember it in the background."""
        try:
            conversation = await self.idle_end(chat, participants)
        except OmoideError:
            return
        if conversation is not None:
            self.schedule(conversation.id)

    # -- the prompt ----------------------------------------------------------------------

    async def prompt_layers(self, character: Character, participants: list[Participant],
                            window: Sequence[Message], said: str = "") -> dict[str, Any]:
        """The world block (stable) and notes on absent characters named in the
        last MENTION_DEPTH messages (tail), as PromptContext fields; `said`, the
        summary of the same prompt, is not repeated in the block (`new_to`)."""
        view = await self.store.world.view(character.id)
        me = character.display_name
        recent = window[-MENTION_DEPTH:]
        scanner = MentionScanner(self.directory.known_among(words_of(recent)), [p.key for p in participants])
        named = {k.key: k for m in recent for k in scanner.scan(m.content)}
        return {
            "world": world_block(view, me, [p for p in participants if p.key != character.id], said),
            "world_notes": [mention_note(view, me, k.key, k.name) for k in named.values()],
        }

    # -- running passes -----------------------------------------------------------------

    def schedule(self, conversation_id: int) -> None:
        task = asyncio.get_running_loop().create_task(self._background(conversation_id))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def schedule_sweep(self) -> None:
        self.needs_retry = False
        task = asyncio.get_running_loop().create_task(self._sweep_quietly())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _background(self, conversation_id: int) -> None:
        try:
            await self.run(conversation_id)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - world work must never crash the chat
            log.exception("world pass failed")
            self.emit(MemoryWorkFailed("world", exc.message if isinstance(exc, OmoideError) else repr(exc)))

    async def run(self, conversation_id: int) -> PassResult:
        """Run (or resume) the pass of one conversation, in the caller's task."""
        if conversation_id in self._running:
            return PassResult()
        self._running.add(conversation_id)
        try:
            conv = await self.store.world.conversation(conversation_id)
            if not conv.in_force or conv.state == "done":
                return PassResult(stopped=not conv.in_force)
            self.emit(MemoryWorkStarted("world"))
            messages = await self._messages(conv)
            user = next((p.name for p in conv.participants if p.is_user), self.user_name)
            descriptions = {p.key: self.directory.description(p.key, user) for p in conv.characters}
            backend: Backend = self.backend
            if self.prefix is not None and await continues(self.store, conv, *self.prefix):
                backend = Continuing(self.backend, self.prefix[1], context_size=self.context_size,
                                     max_tokens=self.settings.max_tokens)
            run = ConversationPass(
                self.store, backend, conv, messages, descriptions=descriptions, speaker=speaker_for(conv, self.directory),
                settings=self.settings, run=self.gate.run, lock=self.lock, witnessed=await witnessed_by(self.store, conv, messages),
                own_words=self.own_words,
            )
            result = await run.run()
            if not result.stopped:
                await self.store.world.set_state(conv.id, "incomplete" if result.failed else "done")
            self.last_result = result
            self.needs_retry = self.needs_retry or bool(result.failed)
            if result.failed:
                self.emit(MemoryWorkFailed("world", f"{len(result.failed)} world memory step(s) failed"))
            else:
                self.emit(MemoryWorkDone("world"))
            return result
        finally:
            self._running.discard(conversation_id)

    async def _messages(self, conv: Conversation) -> list[Message]:
        path = await self.store.messages.path(conv.end_id, limit=RANGE_CAP)
        start = next((i for i, m in enumerate(path) if m.id == conv.first_id), 0)
        return path[start:]

    async def sweep(self) -> list[PassResult]:
        """End idle conversations in every chat and resume unfinished passes."""
        for chat in await self.store.chats.list():
            try:
                conv = await self.idle_end(chat)
            except OmoideError:
                continue
            if conv is not None:
                log.info("chat #%s was idle: conversation #%s ended", chat.id, conv.id)
        results = []
        for conv in reversed(await self.store.world.conversations(unfinished=True)):
            if conv.in_force and conv.attempts < MAX_ATTEMPTS:
                results.append(await self.run(conv.id))
        return results

    async def _sweep_quietly(self) -> None:
        try:
            await self.sweep()
        except asyncio.CancelledError:
            raise
        except Exception:  # noqa: BLE001
            log.exception("world sweep failed")

    async def wait(self) -> None:
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def cancel(self) -> None:
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    # -- branches --------------------------------------------------------------------------

    async def follow_head(self, chat_id: int) -> None:
        """Retract the updates of conversations whose end has left the chat's
        path, and reinstate those whose end is back on it (branches.py)."""
        await self.branches.follow_head(chat_id)
