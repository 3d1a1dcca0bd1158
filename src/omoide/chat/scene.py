"""Who is in this chat, for a session: who is present at the head (/invite,
/leave), who answers a message, what each speaker's prompt may know of the
scene (what it witnessed: the messages, summary, memos and diary of the time it
was there; the running conversation's gossip target), and the participants of
the conversation the world remembers."""

from __future__ import annotations

from collections.abc import Sequence

from omoide.characters.model import Character
from omoide.chat.state import ChatState
from omoide.config.sections import MemorySettings
from omoide.domain.chat import MemoryState, Message, Role
from omoide.domain.witness import Reader
from omoide.domain.world import Participant
from omoide.errors import CommandError
from omoide.memory.book import memory_state
from omoide.memory.prompt.model import SceneFacts
from omoide.memory.recall import Recalled
from omoide.scene.opening import retitled
from omoide.scene.cast import SceneCast
from omoide.scene.speakers import Choice
from omoide.world.directory import one_on_one
from omoide.world.keeper import WorldKeeper
from omoide.world.prompt import gossip_block

CONTINUE_MAX = 20


class ChatScene:
    def __init__(self, state: ChatState, character: Character, cast: SceneCast, world: WorldKeeper,
                 memory: MemorySettings) -> None:
        self.state = state
        self.store = state.store
        self.character = character
        self.cast = cast
        self.world = world
        self.memory = memory
        """[memory]: how each speaker's memory state is read."""
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
        before = [c.display_name for c in self.present]
        self.state.own_head = note.id
        chat = await self.state.refresh()
        await self.refresh()
        # The title omoide gave names who is here: it follows /invite and /leave (a title you gave stays).
        title = retitled(chat.title, before, [c.display_name for c in self.present])
        if title is not None and title != chat.title:
            await self.store.chats.rename(chat.id, title)
            await self.state.refresh()

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

    async def reader(self, head_id: int, speaker: Character) -> Reader | None:
        """`speaker`'s view of the chat at `head_id` in a scene: who witnessed what,
        read from the stage notes on the path (domain/witness.py). None in a
        one-on-one chat, whose character witnessed everything."""
        if not self.is_scene:
            return None
        return Reader(speaker.id, await self.store.scenes.attendance(self.state.chat, head_id))

    async def speaker_memory(self, head_id: int, speaker: Character) -> tuple[MemoryState, Reader | None]:
        """The memory `speaker`'s prompt at `head_id` is made from: in a scene only
        what it witnessed or was told there (its window, summary, memos and diary:
        memory/boundary.py); you still see the whole transcript."""
        reader = await self.reader(head_id, speaker)
        return await memory_state(self.store, self.memory, head_id, reader), reader

    async def witnessed_recall(self, recalled: Sequence[Recalled], reader: Reader | None) -> list[str]:
        """The moments /recall brought back that `reader` witnessed (all of them
        outside a scene), as the prompt's lines."""
        return [r.line() for r in recalled if reader is None or reader.reads(r.owner, r.depth)]

    async def gossip_for(self, speaker: Character, head_id: int) -> tuple[str, str]:
        """(prompt block, target's name) for the running conversation's gossip
        target, drawn once per conversation; ('', '') when there is none."""
        if self.cast.gossip_rate <= 0:
            return "", ""  # none is ever drawn: where the conversation starts need not be read
        chat = self.state.chat
        first = await self.world.open_start(chat, head_id)
        key = (chat.id, first)
        if self._gossip is None or self._gossip[0] != key:
            self._gossip = (key, await self.cast.gossip(chat, self.present, first))
        target = self._gossip[1]
        if target is None or target.id in {c.id for c in self.present}:
            return "", ""
        view = await self.store.world.view(speaker.id)
        return gossip_block(view, speaker.display_name, target.id, target.display_name), target.display_name
