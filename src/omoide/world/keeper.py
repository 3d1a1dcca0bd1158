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

Branches: world memory follows each chat's current path. An update is in
force while the end of the conversation that caused it is on its chat's
path. `/branch restore` (or undo, a swipe, an edit) to a point before that end
*retracts* it: a new version gives back what the conversation changed (list
entries it added are taken out; a text or number goes back to its value
before, unless something else changed it since, which is then kept and
logged). Returning to the end *reinstates* it the same way. Every retract and
reinstate is a new, logged version; no update is ever lost from the log.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime, timedelta, timezone
from typing import Any

from omoide.characters.library import Library
from omoide.characters.model import Character, substitute
from omoide.domain.library import Named
from omoide.config.sections import WorldSettings
from omoide.domain.chat import Chat, Message, Role
from omoide.errors import CommandError, NothingYet, OmoideError
from omoide.memory.events import MemoryEvent, MemoryWorkDone, MemoryWorkFailed, MemoryWorkStarted
from omoide.llm.base import Backend
from omoide.memory.shared import ChatPrefix, Continuing
from omoide.store import Store
from omoide.store.world import Conflict
from omoide.world.book import WorldBook
from omoide.world.boundary import continues, witnessed_by
from omoide.world.conversation import ConversationPass, PassResult
from omoide.world.gate import ReplyGate
from omoide.world.mentions import Known, MentionScanner, known_from, named_by, words_of
from omoide.domain.world import APPLYING, LIST_FIELDS, Conversation, Field, Participant, UpdateKind, dump_items, load_items, user_key
from omoide.world.prompt import mention_note, world_block

log = logging.getLogger(__name__)

RANGE_CAP = 400
"""Most messages a pass reads (the newest of the conversation)."""
MAX_ATTEMPTS = 5
MENTION_DEPTH = 4
"""Recent messages scanned for absent characters' names, for the hidden mention notes."""


class Directory:
    """The characters there are: for names, descriptions and mention scanning.
    Names come from the library's index on first use; a character's card is
    read only when that character is needed (a `load` reads them all instead)."""

    def __init__(self, extra: Iterable[Character] = (), load: Callable[[], list[Character]] | None = None,
                 library: Library | None = None) -> None:
        self._extra = {c.id: c for c in extra}
        self._load = load
        self._library = library
        self._by_id: dict[str, Character] | None = None
        self._named: list[Named] | None = None
        self._read: dict[str, Character | None] = {}
        self._known: list[Known] | None = None

    @property
    def characters(self) -> dict[str, Character]:
        """Every character, each card read (a scene's /invite by name)."""
        if self._by_id is None:
            found = self._loaded() if self._load is not None else self._scanned()
            self._by_id = {c.id: c for c in [*found, *self._extra.values()]}
        return self._by_id

    def _scanned(self) -> list[Character]:
        try:
            return (self._library or Library()).scan().characters
        except OmoideError:
            return []

    def _loaded(self) -> list[Character]:
        assert self._load is not None
        try:
            found = self._load()
        except OmoideError:
            found = []
        return list(found)

    def named(self) -> list[Named]:
        """Every character's id and names, sorted by id: from the index, no card read."""
        if self._by_id is not None or self._load is not None:
            return sorted(self.characters.values(), key=lambda c: c.id)
        if self._named is None:
            try:
                entries: list[Named] = list((self._library or Library()).names())
            except OmoideError:
                entries = []
            by_id: dict[str, Named] = {e.id: e for e in entries}
            by_id.update(self._extra)
            self._named = [by_id[key] for key in sorted(by_id)]
        return self._named

    def get(self, key: str) -> Character | None:
        if self._by_id is not None or self._load is not None:
            return self.characters.get(key)
        if key in self._extra:
            return self._extra[key]
        if key not in self._read:
            try:
                self._read[key] = (self._library or Library()).load(key)
            except OmoideError:
                self._read[key] = None
        return self._read[key]

    def ids(self) -> list[str]:
        """Every character's id, sorted: from the index, no name or card read."""
        if self._by_id is not None or self._load is not None:
            return sorted(self.characters)
        try:
            found = set((self._library or Library()).ids())
        except OmoideError:
            found = set()
        return sorted(found | set(self._extra))

    def known_among(self, words: set[str]) -> list[Known]:
        """`known()` of the characters a text of `words` (mentions.words_of) may
        name, sorted by id: from the index only their names are read, however
        large the library. When the index cannot answer, every name is read
        once (`known()`), as before there was one."""
        if self._by_id is None and self._load is None:
            try:
                entries = (self._library or Library()).named_with(words)
            except OmoideError:
                entries = None
            if entries is not None:
                by_id: dict[str, Named] = {e.id: e for e in entries if e.id not in self._extra}
                by_id.update(self._extra)
                return [k for k in known_from(by_id[key] for key in sorted(by_id)) if named_by(k, words)]
        return [k for k in self.known() if named_by(k, words)]

    def known(self) -> list[Known]:
        if self._known is None or self._by_id is not None or self._load is not None:
            self._known = known_from(self.named())
        return self._known

    def description(self, key: str, user: str) -> str:
        character = self.get(key)
        if character is None:
            return ""
        return substitute(character.description, char=character.display_name, user=user).strip()


def one_on_one(character: Character, user_name: str) -> list[Participant]:
    return [Participant(character.id, character.display_name), Participant(user_key(user_name), user_name)]


def speaker_for(conversation: Conversation, directory: Directory | None = None) -> Callable[[Message], str]:
    """Who said a message: the user, or the character stored on it (group
    scenes); a reply with no speaker is the chat's (first) character's."""
    names = {p.key: p.name for p in conversation.participants}
    character = next((p.name for p in conversation.participants if not p.is_user), "?")
    user = next((p.name for p in conversation.participants if p.is_user), "User")

    def name(m: Message) -> str:
        if m.role is Role.USER:
            return user
        if m.speaker is None:
            return character
        found = directory.get(m.speaker) if directory is not None and m.speaker not in names else None
        return names.get(m.speaker) or (found.display_name if found else m.speaker)

    return name


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
                            window: Sequence[Message]) -> dict[str, Any]:
        """The world block (stable) and notes on absent characters named in the
        last MENTION_DEPTH messages (tail), as PromptContext fields."""
        view = await self.store.world.view(character.id)
        me = character.display_name
        recent = window[-MENTION_DEPTH:]
        scanner = MentionScanner(self.directory.known_among(words_of(recent)), [p.key for p in participants])
        named = {k.key: k for m in recent for k in scanner.scan(m.content)}
        return {
            "world": world_block(view, me, [p for p in participants if p.key != character.id]),
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
        path, and reinstate those whose end is back on it."""
        convs = await self.store.world.conversations(chat_id=chat_id)
        if not convs:
            return
        chat = await self.store.chats.get(chat_id)
        on_path = await self.store.world.ends_on_path(chat.head_id, [c.end_id for c in convs])
        for conv in reversed(convs):
            if conv.in_force and conv.end_id not in on_path:
                async with self.lock:
                    await self._retract(conv)
            elif not conv.in_force and conv.end_id in on_path:
                async with self.lock:
                    await self._reinstate(conv)
                if conv.state != "done":
                    self.schedule(conv.id)

    async def _touched(self, conv: Conversation) -> dict[tuple[str, str, Field], tuple[str | None, str | None]]:
        """(owner, about, field) -> (value before the conversation, value it left)."""
        touched: dict[tuple[str, str, Field], tuple[str | None, str | None]] = {}
        for u in await self.store.world.applied(conv.id):
            key = (u.owner, u.about, u.field)
            touched[key] = (touched[key][0] if key in touched else u.before, u.after)
        return touched

    async def _retract(self, conv: Conversation) -> None:
        for (owner, about, name), (before, after) in (await self._touched(conv)).items():
            current = await self.store.world.current(owner, about, name)
            if name in LIST_FIELDS:
                items = load_items(current)
                kept = [i for i in items if i.conversation_id != conv.id]
                if len(kept) != len(items):
                    await self._set(conv, owner, about, name, dump_items(kept), UpdateKind.RETRACT, current)
            elif current == after:
                await self._set(conv, owner, about, name, before or "", UpdateKind.RETRACT, current)
            else:
                await self._kept(conv, owner, about, name, current, before)
        await self.store.world.set_in_force(conv.id, False)

    async def _reinstate(self, conv: Conversation) -> None:
        retracted = {(u.owner, u.about, u.field): u.after for u in await self.store.world.updates(conversation_id=conv.id)
                     if u.kind is UpdateKind.RETRACT}
        for (owner, about, name), (_before, after) in (await self._touched(conv)).items():
            current = await self.store.world.current(owner, about, name)
            if name in LIST_FIELDS:
                items = load_items(current)
                have = {(i.conversation_id, i.text) for i in items}
                back = [i for i in load_items(after) if i.conversation_id == conv.id and (i.conversation_id, i.text) not in have]
                if back:
                    merged = sorted([*items, *back], key=lambda i: i.conversation_id or 0)[-self.settings.rolling :]
                    await self._set(conv, owner, about, name, dump_items(merged), UpdateKind.REINSTATE, current)
            elif (owner, about, name) in retracted and current == retracted[(owner, about, name)]:
                await self._set(conv, owner, about, name, after or "", UpdateKind.REINSTATE, current)
            else:
                await self._kept(conv, owner, about, name, current, after)
        await self.store.world.set_in_force(conv.id, True)

    async def _set(self, conv: Conversation, owner: str, about: str, name: Field, value: str,
                   kind: UpdateKind, expect: str | None) -> None:
        try:
            await self.store.world.change(owner, about, name, value, step=str(kind), kind=kind,
                                          conversation_id=conv.id, message_id=conv.end_id, expect=expect)
        except Conflict:
            await self._kept(conv, owner, about, name, await self.store.world.current(owner, about, name), value)

    async def _kept(self, conv: Conversation, owner: str, about: str, name: Field, current: str | None, other: str | None) -> None:
        await self.store.world.note(owner, about, name, step="kept", kind=UpdateKind.KEPT, before=current, after=other,
                                    conversation_id=conv.id, message_id=conv.end_id,
                                    error="changed since by a later update or an edit; left as it is")
