"""Who is in this chat, for a session: who is present at the head (/invite,
/leave), who answers a message, what each speaker's prompt may know of the
scene (its own diary, the running conversation's gossip target), and the
participants of the conversation the world remembers."""

from __future__ import annotations

from dataclasses import replace

from omoide.characters.model import Character
from omoide.chat.state import ChatState
from omoide.domain.chat import DiaryEntry, MemoryState, Message, Role
from omoide.domain.world import Participant
from omoide.errors import CommandError
from omoide.memory.prompt.model import SceneFacts
from omoide.scene.cast import SceneCast
from omoide.scene.speakers import Choice
from omoide.world.keeper import WorldKeeper, one_on_one
from omoide.world.prompt import gossip_block

CONTINUE_MAX = 20


class ChatScene:
    def __init__(self, state: ChatState, character: Character, cast: SceneCast, world: WorldKeeper) -> None:
        self.state = state
        self.store = state.store
        self.character = character
        self.cast = cast
        self.world = world
        self.present = [character]
        """The characters present at the head (more than one in a group scene)."""
        self._gossip: tuple[tuple[int, int | None], Character | None] | None = None

    @property
    def is_scene(self) -> bool:
        return self.cast.is_scene(self.state.chat)

    async def refresh(self) -> None:
        """Read who is present at the head (after the chat row was refreshed)."""
        if self.is_scene:
            self.present = await self.cast.present(self.state.chat, self.state.chat.head_id)

    def names(self) -> dict[str, str]:
        """Id -> display name of everyone ever in the chat."""
        return self.cast.names(self.state.chat)

    def speaker_name(self, message: Message) -> str:
        """Who wrote `message`, by name (the user's messages: the persona's name)."""
        if message.role is Role.USER:
            return self.state.user_name
        if message.role is Role.SYSTEM:
            return ""
        try:
            return self.cast.character(message.speaker or self.state.chat.character).display_name
        except CommandError:
            return message.speaker or self.character.display_name

    @property
    def participants(self) -> list[Participant]:
        if self.is_scene:
            return self.cast.participants(self.present, self.state.user_name)
        return one_on_one(self.character, self.state.user_name)

    # -- who is here --------------------------------------------------------------------------

    async def invite(self, name: str) -> Message:
        """Bring a character into this chat (a stage note on the path)."""
        chat = await self.state.refresh()
        guest = self.cast.find(name)
        if guest.id in {c.id for c in self.present}:
            raise CommandError(f"{guest.display_name} is already here.", "/leave NAME lets a character go.")
        if guest.id != self.character.id and self.cast.directory.get(guest.id) is None:
            raise CommandError(f"{guest.display_name} is not in your library.", "`omoide characters list` shows who is.")
        note = await self.store.scenes.stage_note(chat, chat.head_id, guest.id, "invite", f"{guest.display_name} joins the scene.")
        await self._after_note(note)
        return note

    async def leave(self, name: str) -> Message:
        """Let a character go; the last one present cannot leave."""
        chat = await self.state.refresh()
        going = self.cast.find(name)
        if going.id not in {c.id for c in self.present}:
            raise CommandError(f"{going.display_name} is not in this scene.",
                               f"Present: {', '.join(c.display_name for c in self.present)}.")
        if len(self.present) == 1:
            raise CommandError(f"{going.display_name} is the only character here.", "/invite someone else first.")
        note = await self.store.scenes.stage_note(chat, chat.head_id, going.id, "leave", f"{going.display_name} leaves the scene.")
        await self._after_note(note)
        return note

    async def _after_note(self, note: Message) -> None:
        self.state.own_head = note.id
        await self.state.refresh()
        await self.refresh()

    # -- who speaks ---------------------------------------------------------------------------

    def check_speaker(self, name: str) -> Character:
        """The present character called `name`, or a CommandError saying who is here."""
        wanted = self.cast.find(name)
        if wanted.id not in {c.id for c in self.present}:
            raise CommandError(f"{wanted.display_name} is not in this chat.",
                               f"/invite {wanted.display_name} first, or pick one of: {', '.join(c.display_name for c in self.present)}.")
        return wanted

    async def choose(self, at: Message, *, text: str = "", forced: str | None = None) -> Choice:
        if not self.is_scene and not forced:
            return Choice(self.character.id, self.character.display_name, f"{self.character.display_name} is the only character here")
        return await self.cast.choose(self.state.chat, at.id, self.present, user_name=self.state.user_name, text=text, forced=forced)

    def again(self, reply: Message) -> Choice:
        """A swipe in a scene: the same speaker answers the same message again."""
        key = reply.speaker or self.state.chat.character
        speaker = self.cast.character(key)
        return Choice(key, speaker.display_name, f"{speaker.display_name} again (a swipe keeps the speaker)")

    # -- the speaker's prompt ------------------------------------------------------------------

    def facts(self, speaker: Character) -> SceneFacts | None:
        return self.cast.facts(self.state.chat, speaker, self.present)

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
        chat = self.state.chat
        opened = await self.world.open_range(chat, head_id)
        first = opened[0].id if opened else None
        key = (chat.id, first)
        if self._gossip is None or self._gossip[0] != key:
            self._gossip = (key, await self.cast.gossip(chat, self.present, first))
        target = self._gossip[1]
        if target is None or target.id in {c.id for c in self.present}:
            return "", ""
        view = await self.store.world.view(speaker.id)
        return gossip_block(view, speaker.display_name, target.id, target.display_name), target.display_name
