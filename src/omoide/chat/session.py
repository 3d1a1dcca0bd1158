"""ChatSession: one chat, with no knowledge of any UI.

One turn: store the user's message, pick who answers, and let the turn runner
gather the speaker's prompt, stream the reply into a row stored at once (so a
crash keeps it), and schedule memory work in the background.

The session owns its parts, each a class of its own over the shared
`ChatState` (the chat row, its head, who you are in it):

    turns     the reply of a turn (chat/turn.py)
    sending   how each turn starts: send, regenerate, edits, /next, /continue (chat/sending.py)
    tree      swipes, /undo, branches, actions on any message of the path (chat/tree.py)
    user      your persona and your hand on memory: /remember, /recall, /amnesia (chat/user.py)
    scene     who is present, who answers, each speaker's view (chat/scene.py)
    navigator reading the chat: pages, search, goto, the chat list (chat/navigator.py)
    weights   what the character asks to remember, strengths, recall (chat/chat_memory.py)
    book      the memo book; memory_worker the background compression; world the world keeper
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Callable, Sequence
from datetime import datetime

from omoide.characters.attached import lorebooks_for
from omoide.characters.macros import MacroEnv
from omoide.characters.regex_scripts import load_scripts
from omoide.characters.model import Character
from omoide.chat.chat_memory import ChatMemory
from omoide.chat.events import TurnEvent
from omoide.chat.navigator import Navigator
from omoide.chat.pins import ChatPins
from omoide.chat.scene import ChatScene
from omoide.chat.sending import ChatSending
from omoide.chat.state import ChatState
from omoide.chat.tavern import Tavern, available_personas
from omoide.chat.tree import ChatTree
from omoide.chat.turn import TurnRunner
from omoide.chat.user import ChatUser
from omoide.config.settings import Settings
from omoide.domain.chat import Chat, DiaryEntry, MemoryState, Message
from omoide.domain.world import Conversation
from omoide.errors import NotFound
from omoide.llm.base import Backend
from omoide.memory.book import MemoBook, memory_state
from omoide.memory.events import MemoryEvent
from omoide.memory.prompt.model import AssembledPrompt
from omoide.memory.prompt.sent import shown_text
from omoide.memory.worker import MemoryWorker
from omoide.scene.cast import SceneCast
from omoide.scene.opening import create_chat, scene_chat
from omoide.store import Store
from omoide.chat.library import open_library
from omoide.world.gate import ReplyGate
from omoide.world.directory import Directory
from omoide.world.keeper import WorldKeeper
from omoide.world.profile import ProfileBook


class ChatSession:
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
        self.regex_scripts = load_scripts(character.extensions)
        """The card's regex scripts: what the transcript shows and the prompt sends of stored text."""
        self.settings = settings
        user_name, user_persona = settings.user.name, settings.user.persona
        personas = available_personas(settings)
        if chat.persona and chat.persona in personas:
            user_name, user_persona = chat.persona, personas[chat.persona]
        self.state = ChatState(store, chat, user_name=user_name, user_persona=user_persona)
        self.navigator = Navigator(store, chat, self.shown)
        self.gate = ReplyGate()
        self.memory_worker = MemoryWorker(
            store, chat.id, character, settings.memory, summarizer or backend,
            context_size=settings.backend.context_size, user_name=user_name, on_event=on_memory_event, run=self.gate.run,
            idle=self.gate.idle,
        )
        self.book = MemoBook(store, chat.id, self.memory_worker.retry_memo)
        self.weights = ChatMemory(store, chat, settings.memory, character_id=character.id)
        self.library = open_library(store)
        """The characters there are, through the index in the database."""
        directory = Directory([character], library=self.library)
        self.world = WorldKeeper(
            store, settings.world, summarizer or backend, user_name=settings.user.name,
            context_size=settings.backend.context_size, directory=directory, gate=self.gate, emit=self.memory_worker.report,
            own_words=self.memory_worker.own_words,
        )
        lorebooks, self.lore_problems = lorebooks_for(character)
        self.scene = ChatScene(self.state, character, SceneCast(store, character, settings.scene, directory, gossip_rate=settings.world.gossip_rate), self.world, settings.memory)
        self.tree = ChatTree(self.state, self.world)
        self.user = ChatUser(self.state, settings, character, self.memory_worker, self.weights)
        self.pins = ChatPins(self.state, character.id, speaker_name=self.scene.speaker_name, diary=self._diary)
        """/pin, /pins, /unpin: facts in every prompt of the character."""
        self.tavern = Tavern(store, chat.id)
        """SillyTavern's macros, lore rules and notes for this chat's prompts."""
        self.turns = TurnRunner(
            self.state, settings, backend, character=character, scene=self.scene, user=self.user,
            weights=self.weights, worker=self.memory_worker, world=self.world, gate=self.gate,
            tavern=self.tavern, lorebooks=lorebooks, refresh=self.refresh,
        )
        self.sending = ChatSending(self.state, scene=self.scene, tree=self.tree, turns=self.turns,
                                   world=self.world, refresh=self.refresh)
        """How each turn starts: send, regenerate, edits, /next, /continue (chat/sending.py)."""

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
            chat = await scene_chat(store, [character, *others], settings.user.name, new=new)
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
            chat = await create_chat(store, character, settings.user.name)
        else:
            await store.messages.mark_streaming_interrupted(chat.id)
        session = cls(store, character, settings, backend, chat, summarizer=summarizer, on_memory_event=on_memory_event)
        await session.refresh()
        for other in others:  # named to be in the scene: one who had left comes back (a stage note)
            if other.id not in {c.id for c in session.scene.present}:
                await session.scene.invite(other.id)
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

    # -- what the parts share -------------------------------------------------------

    @property
    def chat(self) -> Chat:
        return self.state.chat

    @property
    def backend(self) -> Backend:
        return self.turns.backend

    @property
    def last_prompt(self) -> AssembledPrompt | None:
        return self.turns.last_prompt

    @property
    def clock(self) -> Callable[[], datetime]:
        return self.state.clock

    @clock.setter
    def clock(self, clock: Callable[[], datetime]) -> None:
        """The chat's now: the prompt's date, the time stamps of what is stored
        (messages, memory) and when a conversation counts as idle all follow it."""
        self.state.clock = clock
        self.store.clock = clock
        self.world.clock = clock

    @property
    def profile(self) -> ProfileBook:
        """The user profile every character knows."""
        return self.weights.profile

    @property
    def own_head(self) -> int | None:
        """The head as this session last left it; a different head in the store
        means another window wrote."""
        return self.state.own_head

    def accept_head(self, head_id: int | None) -> None:
        """The client has shown the head another window left: it is ours now."""
        self.state.own_head = head_id

    async def stored_head(self) -> int | None:
        """The chat's head in the store now (another window may have moved it)."""
        return await self.state.stored_head()

    def use_backend(self, backend: Backend) -> None:
        """Answer with `backend` from the next turn on (the first-run screen's choice).
        Memory work moves with it unless the settings name a summary backend of their own."""
        self.turns.use_backend(backend)

    async def refresh(self) -> Chat:
        chat = await self.state.refresh()
        if self.scene.is_scene:
            await self.scene.refresh()
            self.memory_worker.speaker_names = self.scene.names()
        return chat

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

    def shown(self, message: Message, depth: int | None = None) -> str:
        """`message` as the transcript shows it, `depth` messages from the newest:
        through the card's regex scripts that change what is shown (what is stored stays)."""
        env = MacroEnv(char=self.character.display_name, user=self.state.user_name)
        return shown_text(message, self.regex_scripts, env, depth)

    async def memory(self) -> MemoryState:
        chat = await self.refresh()
        if chat.head_id is None:
            return MemoryState(summary=None)
        return await memory_state(self.store, self.settings.memory, chat.head_id)

    async def head(self) -> Message | None:
        return await self.state.head()

    async def _diary(self) -> list[DiaryEntry]:
        return (await self.memory()).diary

    async def written_since(self, shown: int | None, head: int) -> list[Message] | None:
        """The messages another window appended after `shown` up to `head`, or
        None when `head` is not a descendant of `shown` (it went elsewhere)."""
        if shown is None or not await self.store.messages.is_ancestor(shown, head):
            return None
        return await self.store.messages.path(head, stop_before=shown)

    async def build_prompt(self, head_id: int) -> AssembledPrompt:
        """The chat's character's prompt at `head_id`, as the next turn would send it."""
        return await self.turns.build_prompt(head_id)

    # -- turns ------------------------------------------------------------------

    def send(self, text: str, *, speaker: str | None = None) -> AsyncGenerator[TurnEvent, None]:
        """Your message, and the reply of `speaker` (a name), or of whoever the
        scene picks (see scene/speakers.py)."""
        return self.sending.send(text, speaker=speaker)

    def regenerate(self) -> AsyncGenerator[TurnEvent, None]:
        """Another reply to the last user message, kept beside the others as a swipe."""
        return self.sending.regenerate()

    def edit_last(self, text: str) -> AsyncGenerator[TurnEvent, None]:
        """Replace your last message with a new sibling and answer it."""
        return self.sending.edit_last(text)

    def edit_message(self, message_id: int, text: str) -> AsyncGenerator[TurnEvent, None]:
        """Any message of the path rewritten; yours is answered."""
        return self.sending.edit_message(message_id, text)

    def regenerate_from(self, message_id: int) -> AsyncGenerator[TurnEvent, None]:
        """A new reply at any message of the path."""
        return self.sending.regenerate_from(message_id)

    def next_turn(self, name: str | None = None) -> AsyncGenerator[TurnEvent, None]:
        """/next [NAME]: a character speaks without a message from you."""
        return self.sending.next_turn(name)

    def continue_turns(self, turns: int = 3) -> AsyncGenerator[TurnEvent, None]:
        """/continue N: the characters talk among themselves for N turns."""
        return self.sending.continue_turns(turns)

    # -- the world: conversations and what the characters carry out of them ------------------

    async def end_conversation(self, *, background: bool = True) -> Conversation:
        """End the running conversation: its world updates run in the background
        (or, with background=False, when the caller runs `world.run`)."""
        chat = await self.refresh()
        conversation = await self.world.end(chat, self.scene.participants)
        if background:
            self.world.schedule(conversation.id)
        return conversation

    def remember_stored(self) -> None:
        """Catch memory up, in the background, with lines stored with no reply of the
        model's after them (a scenario's stored lines, a pasted block): the work a reply
        would have started, part by part at the same cadence. (An imported chat is
        caught up after its first reply, which starts the same work.)"""
        if self.state.own_head is not None:
            self.memory_worker.schedule(self.state.own_head)

    async def wait_for_memory_work(self, *, warm_up: bool = True) -> None:
        """Until memory work, the world pass and the message vectors made in the
        background have ended, and (`warm_up`) the engine has evaluated the next prompt's new start (TurnRunner.warm),
        which a process about to exit has no use for."""
        await self.memory_worker.wait()
        await self.world.wait()
        await self.turns.story.settled()
        if warm_up and self.turns.warming is not None:
            await asyncio.shield(self.turns.warming)

    async def aclose(self) -> None:
        # A reply cut off by the app closing (Ctrl+Q, SIGTERM) is still being stored as interrupted.
        await asyncio.gather(*self.turns.finishing, return_exceptions=True)
        await self.memory_worker.cancel()
        await self.world.cancel()
        await self.turns.story.aclose()
        if self.turns.warming is not None:
            self.turns.warming.cancel()
            await asyncio.gather(self.turns.warming, return_exceptions=True)
