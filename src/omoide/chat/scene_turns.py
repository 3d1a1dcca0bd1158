"""Group-scene turns, as part of ChatSession (a mixin over the session's store,
chat, cast and reply machinery): /invite, /leave, who answers a message,
/next, /continue N, and the gossip target of the running conversation."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import aclosing
from dataclasses import replace
from typing import TYPE_CHECKING

from omoide.characters.model import Character
from omoide.domain.chat import Chat, DiaryEntry, MemoryState, Message, Role
from omoide.errors import CommandError
from omoide.chat.events import TurnEvent
from omoide.scene.cast import SceneCast
from omoide.scene.speakers import Choice
from omoide.store import Store
from omoide.world.keeper import WorldKeeper
from omoide.world.prompt import gossip_block

CONTINUE_MAX = 20


class SceneTurns:
    store: Store
    chat: Chat
    character: Character
    cast: SceneCast
    present: list[Character]
    user_name: str
    world: WorldKeeper
    _own_head: int | None
    _gossip: tuple[tuple[int, int | None], Character | None] | None

    if TYPE_CHECKING:
        async def head(self) -> Message | None: ...
        async def refresh(self) -> Chat: ...
        def _reply(self, parent: Message, head_id: int, *, moves_head: bool = False,
                   choice: Choice | None = None) -> AsyncGenerator[TurnEvent, None]: ...

    @property
    def is_scene(self) -> bool:
        return self.cast.is_scene(self.chat)

    def speaker_name(self, message: Message) -> str:
        """Who wrote `message`, by name (the user's messages: the persona's name)."""
        if message.role is Role.USER:
            return self.user_name
        if message.role is Role.SYSTEM:
            return ""
        try:
            return self.cast.character(message.speaker or self.chat.character).display_name
        except CommandError:
            return message.speaker or self.character.display_name

    # -- who is here --------------------------------------------------------------------------

    async def invite(self, name: str) -> Message:
        """Bring a character into this chat (a stage note on the path)."""
        chat = await self.refresh()
        guest = self.cast.find(name)
        if guest.id in {c.id for c in self.present}:
            raise CommandError(f"{guest.display_name} is already here.", "/leave NAME lets a character go.")
        if guest.id != self.character.id and self.cast.directory.get(guest.id) is None:
            raise CommandError(f"{guest.display_name} is not in your library.", "`omoide characters list` shows who is.")
        note = await self.store.scenes.stage_note(chat, chat.head_id, guest.id, "invite", f"{guest.display_name} joins the scene.")
        self._own_head = note.id
        await self.refresh()
        return note

    async def leave(self, name: str) -> Message:
        """Let a character go; the last one present cannot leave."""
        chat = await self.refresh()
        going = self.cast.find(name)
        if going.id not in {c.id for c in self.present}:
            raise CommandError(f"{going.display_name} is not in this scene.",
                               f"Present: {', '.join(c.display_name for c in self.present)}.")
        if len(self.present) == 1:
            raise CommandError(f"{going.display_name} is the only character here.", "/invite someone else first.")
        note = await self.store.scenes.stage_note(chat, chat.head_id, going.id, "leave", f"{going.display_name} leaves the scene.")
        self._own_head = note.id
        await self.refresh()
        return note

    # -- who speaks ---------------------------------------------------------------------------

    def check_speaker(self, name: str) -> Character:
        """The present character called `name`, or a CommandError saying who is here."""
        wanted = self.cast.find(name)
        if wanted.id not in {c.id for c in self.present}:
            raise CommandError(f"{wanted.display_name} is not in this chat.",
                               f"/invite {wanted.display_name} first, or pick one of: {', '.join(c.display_name for c in self.present)}.")
        return wanted

    async def choose_speaker(self, at: Message, *, text: str = "", forced: str | None = None) -> Choice:
        if not self.is_scene and not forced:
            return Choice(self.character.id, self.character.display_name, f"{self.character.display_name} is the only character here")
        return await self.cast.choose(self.chat, at.id, self.present, user_name=self.user_name, text=text, forced=forced)

    async def next_turn(self, name: str | None = None) -> AsyncGenerator[TurnEvent, None]:
        """/next [NAME]: a character speaks without a message from you."""
        head = await self.head()
        if head is None:
            raise CommandError("The chat is empty.", "Send a message first.")
        choice = await self.choose_speaker(head, forced=name)
        async with aclosing(self._reply(head, head.id, choice=choice)) as events:
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

    async def regenerate_speaker(self, head: Message) -> AsyncGenerator[TurnEvent, None]:
        """A swipe in a scene: the same speaker answers the same message again."""
        assert head.parent_id is not None
        parent = await self.store.messages.get(head.parent_id)
        key = head.speaker or self.chat.character
        speaker = self.cast.character(key)
        choice = Choice(key, speaker.display_name, f"{speaker.display_name} again (a swipe keeps the speaker)")
        async with aclosing(self._reply(parent, head.id, moves_head=True, choice=choice)) as events:
            async for event in events:
                yield event

    # -- the speaker's prompt ------------------------------------------------------------------

    def own_memory(self, state: MemoryState, speaker: Character) -> MemoryState:
        """In a scene each character reads its own diary (and what everyone reads)."""
        if not self.is_scene:
            return state

        def mine(entries: list[DiaryEntry]) -> list[DiaryEntry]:
            return [e for e in entries if e.owner in (None, speaker.id)]
        return replace(state, stable_diary=mine(state.stable_diary), new_diary=mine(state.new_diary))

    async def gossip_for(self, speaker: Character, head_id: int) -> tuple[str, str]:
        """(prompt block, target's name) for the running conversation's gossip
        target, drawn once per conversation; ('', '') when there is none."""
        opened = await self.world.open_range(self.chat, head_id)
        first = opened[0].id if opened else None
        key = (self.chat.id, first)
        if self._gossip is None or self._gossip[0] != key:
            self._gossip = (key, await self.cast.gossip(self.chat, self.present, first))
        target = self._gossip[1]
        if target is None or target.id in {c.id for c in self.present}:
            return "", ""
        view = await self.store.world.view(speaker.id)
        return gossip_block(view, speaker.display_name, target.id, target.display_name), target.display_name
