"""Each way a turn starts: your message, a regenerate, an edit of your last
message or of any message of the path, a new reply at any message, /next and
/continue. Each stores what it must, picks who answers (chat/scene.py) and
streams the reply through the turn runner (chat/turn.py).

`ChatSession.send` and the rest hand these on; the session owns one as
`session.sending`.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import aclosing

from omoide.chat.events import ChangedElsewhere, MessageRewritten, PathKept, TurnEvent, UserMessageStored
from omoide.chat.scene import CONTINUE_MAX, ChatScene
from omoide.chat.state import ChatState
from omoide.chat.tree import ChatTree
from omoide.chat.turn import TurnRunner
from omoide.domain.chat import Chat, Role
from omoide.errors import CommandError, HeadMoved, StorageUnavailable
from omoide.scene.speakers import Choice
from omoide.world.keeper import WorldKeeper


class ChatSending:
    """The turns a client starts, over the session's parts."""

    def __init__(self, state: ChatState, *, scene: ChatScene, tree: ChatTree, turns: TurnRunner,
                 world: WorldKeeper, refresh: Callable[[], Awaitable[Chat]]) -> None:
        self.state = state
        self.store = state.store
        self.scene = scene
        self.tree = tree
        self.turns = turns
        self.world = world
        self.refresh = refresh
        """The session's: the chat row again, and a scene's cast with it."""

    async def send(self, text: str, *, speaker: str | None = None) -> AsyncGenerator[TurnEvent, None]:
        """Your message, and the reply of `speaker` (a name), or of whoever the
        scene picks (see scene/speakers.py)."""
        text = text.strip()
        if not text:
            raise CommandError("There is nothing to send.", "Type a message first.")
        chat = await self.refresh()
        if speaker:
            self.scene.check_speaker(speaker)  # before your message is stored
        await self.world.end_if_idle(chat, self.scene.participants)
        moved = chat.head_id != self.state.own_head
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
        self.state.own_head = user_message.id
        yield UserMessageStored(user_message)
        choice = await self.scene.choose(user_message, text=text, forced=speaker)
        async with aclosing(self.turns.reply(user_message, user_message.id, choice=choice)) as events:
            async for event in events:
                yield event

    async def regenerate(self) -> AsyncGenerator[TurnEvent, None]:
        """Another reply to the last user message, kept beside the others as a swipe
        (in a scene, by the same speaker)."""
        head = await self.state.head()
        if head is None:
            raise CommandError("There is nothing to regenerate yet.", "Send a message first.")
        if self.scene.is_scene and head.role is Role.ASSISTANT and head.parent_id is not None:
            parent = await self.store.messages.get(head.parent_id)
            async with aclosing(self.turns.reply(parent, head.id, moves_head=True, choice=self.scene.again(head))) as scene_events:
                async for event in scene_events:
                    yield event
            return
        user_message = head if head.role is Role.USER else None
        if head.role is Role.ASSISTANT and head.parent_id is not None:
            parent = await self.store.messages.get(head.parent_id)
            user_message = parent if parent.role is Role.USER else None
        if user_message is None:
            raise CommandError("The last message is the greeting; there is no reply to regenerate.", "Send a message first.")
        async with aclosing(self.turns.reply(user_message, head.id, moves_head=True)) as events:
            async for event in events:
                yield event

    async def edit_last(self, text: str) -> AsyncGenerator[TurnEvent, None]:
        """Replace your last message with a new sibling and answer it; the old
        message and its replies stay in the tree."""
        text = text.strip()
        if not text:
            raise CommandError("/edit needs the new text.", "Usage: /edit TEXT")
        chat = await self.refresh()
        path = await self.store.messages.path(chat.head_id, limit=3)
        last_user = next((m for m in reversed(path) if m.role is Role.USER), None)
        if last_user is None:
            raise CommandError("You have not written anything to edit yet.", "Send a message first; /edit replaces your last one.")
        kept = await self.tree.keep_head(path[-1].id)
        edited = await self.store.messages.add(self.state.chat_id, last_user.parent_id, Role.USER, text)
        self.state.own_head = edited.id
        await self.world.follow_head(self.state.chat_id)
        yield PathKept(kept.name)
        yield UserMessageStored(edited)
        choice = await self.scene.choose(edited, text=text)
        async with aclosing(self.turns.reply(edited, edited.id, choice=choice)) as events:
            async for event in events:
                yield event

    async def edit_message(self, message_id: int, text: str) -> AsyncGenerator[TurnEvent, None]:
        """Any message of the path rewritten (`tree.rewrite`: a new sibling, the head
        of a new path). Yours is answered, as /edit answers it; a reply is just stored."""
        message = await self.tree.on_path(message_id)
        edited, kept = await self.tree.rewrite(message_id, text)
        if kept is not None:
            yield PathKept(kept.name)
        if edited.role is not Role.USER:
            yield MessageRewritten(edited)
            return
        yield UserMessageStored(edited)
        choice = await self.scene.choose(edited, text=text)
        async with aclosing(self.turns.reply(edited, edited.id, choice=choice)) as events:
            async for event in events:
                yield event

    async def regenerate_from(self, message_id: int) -> AsyncGenerator[TurnEvent, None]:
        """A new reply at any message of the path: for a reply, another swipe beside it
        (by the same speaker); for your message, a new reply to it. Either way the new
        reply is the head of a new path; the messages after it are kept on `auto-<time>`."""
        message = await self.tree.on_path(message_id)
        if message.stage or (message.parent_id is None and message.role is not Role.USER):
            raise CommandError("Only a reply or your own message can be regenerated from.", "Pick one of the replies instead.")
        kept = await self.tree.keep_rest(message)
        if kept is not None:
            yield PathKept(kept.name)
        head = await self.state.head()
        assert head is not None  # on_path found it
        choice: Choice | None
        if message.role is Role.USER:
            parent, choice = message, await self.scene.choose(message, text=message.content)
        else:
            assert message.parent_id is not None
            parent = await self.store.messages.get(message.parent_id)
            choice = self.scene.again(message) if self.scene.is_scene else None
        async with aclosing(self.turns.reply(parent, head.id, moves_head=True, choice=choice)) as events:
            async for event in events:
                yield event

    async def next_turn(self, name: str | None = None) -> AsyncGenerator[TurnEvent, None]:
        """/next [NAME]: a character speaks without a message from you."""
        head = await self.state.head()
        if head is None:
            raise CommandError("The chat is empty.", "Send a message first.")
        choice = await self.scene.choose(head, forced=name)
        async with aclosing(self.turns.reply(head, head.id, choice=choice)) as events:
            async for event in events:
                yield event

    async def continue_turns(self, turns: int = 3) -> AsyncGenerator[TurnEvent, None]:
        """/continue N: the characters talk among themselves for N turns (close
        the generator to stop; the reply under way is kept as interrupted)."""
        if not 1 <= turns <= CONTINUE_MAX:
            raise CommandError(f"/continue takes 1 to {CONTINUE_MAX} turns, not {turns}.", "Usage: /continue [N]")
        for _ in range(turns):
            async with aclosing(self.next_turn()) as events:
                async for event in events:
                    yield event
