"""ChatSession: one chat with one character, with no knowledge of any UI.

One turn: store the user's message, assemble the prompt from the memory at the
head, stream the reply into a row stored at once (so a crash keeps it), store
the reply, then schedule memory work in the background.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncGenerator, Callable, Sequence
from contextlib import aclosing
from datetime import datetime, timezone
from typing import Literal

from omoide.characters import lorebook
from omoide.characters.attached import lorebooks_for
from omoide.characters.model import Character, LoreEntry, Lorebook, substitute
from omoide.config import Settings
from omoide.domain import Chat, MemoryState, Message, Role
from omoide.errors import CommandError, HeadMoved, NotFound, StorageUnavailable
from omoide.events import (
    ChangedElsewhere, MemoryEvent, MemoryRecalled, ReplyFailed, ReplyFinished, ReplyStarted, TurnEvent, UserMessageStored,
)
from omoide.llm.base import Backend
from omoide.memory.book import MemoBook, memory_state
from omoide.memory.chatmemory import ChatMemory
from omoide.memory.shared import chat_prefix
from omoide.memory.worker import MemoryWorker
from omoide.profile import ProfileBook, prompt_section
from omoide.navigator import Navigator
from omoide.prompt import AssembledPrompt, PromptContext, fit, shared_prefix_chars
from omoide.reply import ReplyStream
from omoide.store import Store
from omoide.tokens import TokenCounter
from omoide.toolform import ToolForm, resolve as resolve_tool_form
from omoide.world.gate import ReplyGate
from omoide.world.keeper import Directory, WorldKeeper, one_on_one
from omoide.scene.cast import SceneCast
from omoide.scene.opening import create_chat, scene_chat
from omoide.scene.speakers import Choice
from omoide.scene.turns import SceneTurns
from omoide.session_memory import UserMemory
from omoide.session_nav import Navigation
from omoide.world.model import Conversation, Participant

log = logging.getLogger(__name__)


def _entry_label(entry: LoreEntry) -> str:
    return entry.name or (entry.keys[0] if entry.keys else "entry")

class ChatSession(SceneTurns, Navigation, UserMemory):
    def __init__(
        self,
        store: Store,
        character: Character,
        settings: Settings,
        backend: Backend,
        chat: Chat,
        *,
        summarizer: Backend | None = None,
        on_memory_event: Callable[[MemoryEvent], None] | None = None,
    ) -> None:
        self.store = store
        self.character = character
        self.settings = settings
        self.backend = backend
        self.chat = chat
        self.navigator = Navigator(store, chat)
        self.user_name = settings.user_name
        self.user_persona = settings.user_persona
        if chat.persona and chat.persona in settings.personas:
            self.user_name, self.user_persona = chat.persona, settings.personas[chat.persona]
        self.last_prompt: AssembledPrompt | None = None
        self.counter = TokenCounter(backend)
        self.memory_worker = MemoryWorker(
            store, chat.id, character, settings, summarizer or backend,
            user_name=self.user_name, on_event=on_memory_event,
        )
        self.clock: Callable[[], datetime] = lambda: datetime.now(timezone.utc)
        self.lorebooks, self.lore_problems = lorebooks_for(character)
        self._previous_render: str | None = None
        self._reported_lore: set[str] = set()
        self._own_head = chat.head_id
        self._finishing: set[asyncio.Future[Message | None]] = set()
        self.book = MemoBook(store, chat.id, self.memory_worker.retry_memo)
        self.weights = ChatMemory(store, chat, settings, character_id=character.id)
        self.pending_recall: list[str] = []
        """Moments brought back with /recall, for the next prompt's tail."""
        self.tool_form: ToolForm | None = None
        """The diary tool's form with this backend, and why; found out on the first reply."""
        self.gate = ReplyGate()
        directory = Directory([character])
        self.cast = SceneCast(store, character, settings, directory)
        self.present = [character]
        """The characters present at the head (more than one in a group scene)."""
        self._gossip = None
        self._lore: dict[str, list[Lorebook]] = {character.id: self.lorebooks}
        self.world = WorldKeeper(
            store, settings, summarizer or backend, directory=directory, gate=self.gate,
            emit=self.memory_worker.report,
        )
        self._swept = False

    @property
    def profile(self) -> ProfileBook:
        """The user profile every character knows."""
        return self.weights.profile

    # -- opening ----------------------------------------------------------------

    @classmethod
    async def open(
        cls,
        store: Store,
        character: Character,
        settings: Settings,
        backend: Backend,
        *,
        chat_id: int | None = None,
        new: bool = False,
        summarizer: Backend | None = None,
        on_memory_event: Callable[[MemoryEvent], None] | None = None,
        others: Sequence[Character] = (),
    ) -> ChatSession:
        """Open a chat: `chat_id`, or the character's most recent, or a new one.
        With `others`, a group scene of the character and them (the newest chat
        with that cast, or a new one)."""
        chat: Chat | None
        if others and chat_id is None:
            chat = await scene_chat(store, [character, *others], settings.user_name, new=new)
        elif chat_id is not None:
            chat = await store.chats.get(chat_id)
            if chat.character != character.id:
                raise NotFound(
                    f"Chat #{chat_id} is with {chat.character}, not {character.id}.",
                    f"Open it with `omoide chat {chat.character} --chat {chat_id}`, or see `omoide chats`.",
                )
        else:
            chat = None if new else await store.chats.latest(character.id)
        if chat is None:
            chat = await create_chat(store, character, settings.user_name)
        else:
            await store.messages.mark_streaming_interrupted(chat.id)
        session = cls(store, character, settings, backend, chat, summarizer=summarizer, on_memory_event=on_memory_event)
        await session.refresh()
        for other in others:  # named to be in the scene: one who had left comes back (a stage note)
            if other.id not in {c.id for c in session.present}:
                await session.invite(other.id)
        return session

    async def open_another(self, chat_id: int | None) -> ChatSession:
        """Another chat with this character (None: a new one), on the same backends
        and with the same memory listener. This session stays open."""
        return await ChatSession.open(
            self.store, self.character, self.settings, self.backend, chat_id=chat_id, new=chat_id is None,
            summarizer=self.memory_worker.backend, on_memory_event=self.on_memory_event,
        )

    async def open_character(self, character: Character) -> ChatSession:
        """`character`'s most recent chat (or a new one), on the same backends and
        with the same memory listener. This session stays open."""
        return await ChatSession.open(
            self.store, character, self.settings, self.backend,
            summarizer=self.memory_worker.backend, on_memory_event=self.on_memory_event,
        )

    @property
    def own_head(self) -> int | None:
        """The head as this session last left it; a different head in the store
        means another window wrote."""
        return self._own_head

    def accept_head(self, head_id: int | None) -> None:
        """The client has shown the head another window left: it is ours now."""
        self._own_head = head_id

    def use_backend(self, backend: Backend) -> None:
        """Answer with `backend` from the next turn on (the first-run screen's choice).
        Memory work moves with it unless the settings name a summary backend of their own."""
        if self.memory_worker.backend is self.backend:
            self.memory_worker.backend = backend
        self.backend = backend
        self.counter = TokenCounter(backend)
        self._previous_render = None

    async def refresh(self) -> Chat:
        self.chat = await self.store.chats.get(self.chat.id)
        if self.cast.is_scene(self.chat):
            self.present = await self.cast.present(self.chat, self.chat.head_id)
            self.memory_worker.speaker_names = self.cast.names(self.chat)
        return self.chat

    @property
    def tools_mode(self) -> Literal["native", "inline"]:
        if not self.backend.supports_tools:
            return "inline"  # never offered, or refused by the server mid-chat
        if self.tool_form is not None:
            return self.tool_form.form
        return "inline" if self.settings.tools == "inline" else "native"

    @property
    def on_memory_event(self) -> Callable[[MemoryEvent], None] | None:
        """Who hears about background memory work (a client sets it)."""
        return self.memory_worker.on_event

    @on_memory_event.setter
    def on_memory_event(self, handler: Callable[[MemoryEvent], None] | None) -> None:
        self.memory_worker.on_event = handler

    @property
    def memory_status(self) -> str:
        return self.memory_worker.status

    # -- reading --------------------------------------------------------------

    async def transcript(self, *, limit: int = 200) -> list[Message]:
        chat = await self.refresh()
        return await self.store.messages.path(chat.head_id, limit=limit)

    async def memory(self) -> MemoryState:
        chat = await self.refresh()
        if chat.head_id is None:
            return MemoryState(summary=None)
        return await memory_state(self.store, self.settings, chat.head_id)

    async def head(self) -> Message | None:
        chat = await self.refresh()
        return await self.store.messages.get(chat.head_id) if chat.head_id else None

    # -- turns ------------------------------------------------------------------

    async def send(self, text: str, *, speaker: str | None = None) -> AsyncGenerator[TurnEvent, None]:
        """Your message, and the reply of `speaker` (a name), or of whoever the
        scene picks (see scene/speakers.py)."""
        text = text.strip()
        if not text:
            raise CommandError("There is nothing to send.", "Type a message first.")
        chat = await self.refresh()
        if speaker:
            self.check_speaker(speaker)  # before your message is stored
        await self.world.end_if_idle(chat, self.participants)
        moved = chat.head_id != self._own_head
        for _attempt in range(5):
            try:
                user_message = await self.store.messages.add(chat.id, chat.head_id, Role.USER, text, expected_head=chat.head_id)
                break
            except HeadMoved:
                chat, moved = await self.refresh(), True
        else:
            raise StorageUnavailable("This chat keeps changing in another window.", "Wait for the other window's reply, then send again.")
        if moved:
            yield ChangedElsewhere("This chat changed in another window; your message follows what was written there.")
        self._own_head = user_message.id
        yield UserMessageStored(user_message)
        choice = await self.choose_speaker(user_message, text=text, forced=speaker)
        async with aclosing(self._reply(user_message, user_message.id, choice=choice)) as events:
            async for event in events:
                yield event

    async def regenerate(self) -> AsyncGenerator[TurnEvent, None]:
        """Another reply to the last user message, kept beside the others as a swipe."""
        head = await self.head()
        if head is None:
            raise CommandError("There is nothing to regenerate yet.", "Send a message first.")
        if self.is_scene and head.role is Role.ASSISTANT and head.parent_id is not None:
            async with aclosing(self.regenerate_speaker(head)) as scene_events:
                async for event in scene_events:
                    yield event
            return
        user_message = head if head.role is Role.USER else None
        if head.role is Role.ASSISTANT and head.parent_id is not None:
            parent = await self.store.messages.get(head.parent_id)
            user_message = parent if parent.role is Role.USER else None
        if user_message is None:
            raise CommandError("The last message is the greeting; there is no reply to regenerate.", "Send a message first.")
        async with aclosing(self._reply(user_message, head.id, moves_head=True)) as events:
            async for event in events:
                yield event

    async def edit_last(self, text: str) -> AsyncGenerator[TurnEvent, None]:
        """Replace your last message with a new sibling and answer it; the old
        message and its replies stay in the tree."""
        text = text.strip()
        if not text:
            raise CommandError("/edit needs the new text.", "Usage: /edit TEXT")
        path = await self.transcript(limit=3)
        last_user = next((m for m in reversed(path) if m.role is Role.USER), None)
        if last_user is None:
            raise CommandError("You have not written anything to edit yet.", "Send a message first; /edit replaces your last one.")
        edited = await self.store.messages.add(self.chat.id, last_user.parent_id, Role.USER, text)
        self._own_head = edited.id
        await self.world.follow_head(self.chat.id)
        yield UserMessageStored(edited)
        choice = await self.choose_speaker(edited, text=text)
        async with aclosing(self._reply(edited, edited.id, choice=choice)) as events:
            async for event in events:
                yield event

    async def _reply(self, parent: Message, head_id: int, *, moves_head: bool = False,
                     choice: Choice | None = None) -> AsyncGenerator[TurnEvent, None]:
        async with self.gate.reply():  # background world work steps aside until the reply is stored
            async with aclosing(self._answer(parent, head_id, moves_head, choice)) as events:
                async for event in events:
                    yield event

    async def _answer(self, parent: Message, head_id: int, moves_head: bool, choice: Choice | None) -> AsyncGenerator[TurnEvent, None]:
        """Answer `parent`; `head_id` is the chat's head as this turn left it (the
        reply becomes the head only if nobody else moved it since)."""
        if self.tool_form is None:
            self.tool_form = await resolve_tool_form(self.settings, self.backend)
        state = await memory_state(self.store, self.settings, parent.id)
        speaker = self.cast.character(choice.key) if choice else self.character
        names = (speaker.display_name, self.user_name)
        if parent.role is Role.USER:
            await self.weights.note_mentions(parent, state, names)
        prompt = await self.build_prompt(parent.id, state=state, speaker=speaker)
        prompt.speaker = f"{speaker.display_name}: {choice.reason}" if choice else ""

        async def recall_tool(query: str) -> list[str]:
            return [r.line() for r in await self._recall_at(parent.id, query, state)]

        stream = ReplyStream(
            self.store, self.backend, parent=parent, messages=prompt.messages, expected_head=head_id, finishing=self._finishing,
            native_tools=self.tools_mode == "native", max_tokens=self.settings.max_tokens,
            save_note=self.weights.save_note, recall=recall_tool if self.settings.recall_tool else None,
            speaker=speaker.id if self.is_scene else None,
        )
        ours = {head_id, parent.id}
        try:
            async with aclosing(stream.events()) as events:
                async for event in events:
                    if isinstance(event, ReplyStarted):
                        ours.add(event.message.id)
                    if isinstance(event, ReplyStarted | ReplyFailed):
                        await self.refresh()
                        if moves_head and isinstance(event, ReplyStarted):
                            await self.world.follow_head(self.chat.id)
                    elif isinstance(event, MemoryRecalled):
                        prompt.recalled += [f"(recall: {event.query}) {line}" for line in event.lines] or [f"(recall: {event.query}) nothing"]
                    elif isinstance(event, ReplyFinished):
                        prompt.usage = event.usage
                        prompt.tool_problems = list(stream.problems)
                        self.pending_recall = []
                        await self.weights.note_mentions(event.message, state, names)
                        prefix = chat_prefix(prompt, event.message)  # memory work on the chat's backend extends it
                        self.memory_worker.schedule(event.message.id, prefix if self.memory_worker.backend is self.backend else None)
                        self.world.prefix = (self.chat.id, prefix) if self.world.backend is self.backend else None
                        if not self._swept or self.world.needs_retry:
                            self._swept = True
                            self.world.schedule_sweep()
                    yield event
                    if isinstance(event, ReplyStarted) and stream.forked:
                        yield await self._fork(event.message)
        finally:
            with contextlib.suppress(Exception):  # bookkeeping only; the store may be closing
                head = await asyncio.shield(self.stored_head())
                if head in ours:  # else another window moved it: the client has yet to see that
                    self._own_head = head

    async def written_since(self, shown: int | None, head: int) -> list[Message] | None:
        """The messages another window appended after `shown` up to `head`, or
        None when `head` is not a descendant of `shown` (it went elsewhere)."""
        if shown is None or not await self.store.messages.is_ancestor(shown, head):
            return None
        return await self.store.messages.path(head, stop_before=shown)

    async def stored_head(self) -> int | None:
        """The chat's head in the store now (another window may have moved it)."""
        return (await self.store.chats.get(self.chat.id)).head_id

    async def _fork(self, reply: Message) -> ChangedElsewhere:
        """Another window wrote on after your message: keep this reply on a branch."""
        name = f"fork-{datetime.now():%Y%m%d-%H%M%S}-{reply.id}"
        await self.store.branches.save(self.chat.id, name, reply.id)
        return ChangedElsewhere(
            f"Another window wrote in this chat while you did; this reply is kept on the branch '{name}' "
            f"(/branch restore {name} goes there).",
            forked=True,
        )

    async def build_prompt(self, head_id: int, *, state: MemoryState | None = None,
                           speaker: Character | None = None) -> AssembledPrompt:
        """The prompt of `speaker` (default: the chat's character) at `head_id`,
        fitted to the context size, counted, and compared with the previous
        turn's to report the shared prefix."""
        speaker = speaker or self.character
        state = self.own_memory(state or await memory_state(self.store, self.settings, head_id), speaker)
        if speaker.id not in self._lore:
            self._lore[speaker.id] = lorebooks_for(speaker)[0]
        recent = [m.content for m in state.window]
        # In a thread: matching is linear-time, but long messages times many keys
        # still must not hold up the event loop (the TUI, a streaming reply).
        lore_budget = self.settings.context_size * self.settings.lore_budget_percent // 100
        books = self._lore[speaker.id]
        scans = await asyncio.to_thread(lambda: [lorebook.scan(book, recent, budget=lore_budget) for book in books])
        fired = [hit for result in scans for hit in result]
        skipped = [skip for result in scans for skip in result.skipped]
        world = await self.world.prompt_layers(speaker, self.participants, state.window)
        gossip, target = ("", "") if "world" in self.chat.amnesia else await self.gossip_for(speaker, head_id)
        if gossip:
            world["world"] = "\n\n".join(p for p in (world["world"], gossip) if p)
        ctx = PromptContext(
            character=speaker,
            user_name=self.user_name,
            user_persona=self.user_persona,
            tools=self.tools_mode,
            diary_lines=self.settings.diary_prompt_lines,
            now=self.clock(),
            constant_lore=[f.entry.content for f in fired if f.reason == "constant"],
            triggered_lore=[f.entry.content for f in fired if f.reason != "constant"],
            memo_layer=self.settings.memory_style != "summary",
            scene=self.cast.facts(self.chat, speaker, self.present),
            **world,
        )
        ctx = await self.weights.weigh(ctx, head_id, state, hidden=self.chat.amnesia, recalled=self.pending_recall)
        budget = max(self.settings.context_size - self.settings.max_tokens, 256)
        self.counter.reset()
        prompt = await fit(ctx, state, self.counter.count, budget)
        prompt.exact, prompt.count_method = self.counter.exact, self.counter.method
        prompt.gossip = target
        prompt.lore = [f"{_entry_label(f.entry)}: {f.reason}" for f in fired]
        prompt.lore += [f"{_entry_label(s.entry)} skipped: {s.reason}" for s in skipped]
        for skip in skipped:  # a broken key or the budget: logged once per entry and reason, not every turn
            key = f"{_entry_label(skip.entry)}: {skip.reason}"
            if key not in self._reported_lore:
                self._reported_lore.add(key)
                log.warning("lore entry '%s' skipped: %s", _entry_label(skip.entry), skip.reason)
        rendered = prompt.rendered()
        if self._previous_render is not None and rendered:
            shared = shared_prefix_chars(self._previous_render, rendered)
            prompt.shared_tokens = round(prompt.total_tokens * shared / len(rendered))
        self._previous_render = rendered
        self.last_prompt = prompt
        return prompt

    # -- the world: conversations and what the characters carry out of them ------------------

    @property
    def participants(self) -> list[Participant]:
        if self.is_scene:
            return self.cast.participants(self.present, self.user_name)
        return one_on_one(self.character, self.user_name)

    async def end_conversation(self, *, background: bool = True) -> Conversation:
        """End the running conversation: its world updates run in the background
        (or, with background=False, when the caller runs `world.run`)."""
        chat = await self.refresh()
        conversation = await self.world.end(chat, self.participants)
        if background:
            self.world.schedule(conversation.id)
        return conversation

    async def wait_for_memory_work(self) -> None:
        await self.memory_worker.wait()
        await self.world.wait()

    async def aclose(self) -> None:
        # A reply cut off by the app closing (Ctrl+Q, SIGTERM) is still being stored as interrupted.
        await asyncio.gather(*self._finishing, return_exceptions=True)
        await self.memory_worker.cancel()
        await self.world.cancel()
