"""The characters of one chat, for a session: who is present at a head, who
speaks next and why, and the facts each speaker's prompt needs.

A chat is a *scene* once more than one character has been in it (`Chat.cast`).
A one-on-one chat never touches any of this beyond `present()`.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from omoide.characters.model import Character
from omoide.config.sections import SceneSettings
from omoide.domain.chat import Chat, Message, Role
from omoide.errors import CommandError
from omoide.memory.prompt.model import SceneFacts
from omoide.scene import speakers
from omoide.store import Store
from omoide.world import familiarity
from omoide.world.directory import Directory
from omoide.domain.world import Field, Participant, user_key

HISTORY = 40
"""Messages of the path read to see who spoke when."""


class SceneCast:
    def __init__(self, store: Store, host: Character, settings: SceneSettings, directory: Directory, *,
                 gossip_rate: float, rng: random.Random | None = None) -> None:
        self.store = store
        self.host = host
        self.settings = settings
        self.gossip_rate = gossip_rate
        """Chance that a conversation gets a gossip target ([world] gossip_rate)."""
        self.directory = directory
        self.rng = rng or random.Random(settings.seed)
        """Injectable: a seeded source makes every draw reproducible."""

    def character(self, key: str) -> Character:
        if key == self.host.id:
            return self.host
        found = self.directory.get(key)
        if found is None:
            raise CommandError(f"The character '{key}' of this scene is not in your library any more.",
                               "Import it again (`omoide characters import FILE`) or /leave it.")
        return found

    def find(self, name: str) -> Character:
        """A character of the library by id, name or nickname."""
        wanted = name.strip().casefold()
        everyone = {self.host.id: self.host, **self.directory.characters}
        for c in everyone.values():
            if wanted == c.id.casefold():
                return c
        for c in everyone.values():
            if wanted in (c.name.casefold(), c.nickname.casefold(), c.display_name.casefold()):
                return c
        raise CommandError(f"There is no character called '{name}'.",
                           f"Characters: {', '.join(sorted(everyone)) or 'none'}. `omoide characters list` shows them.")

    async def present(self, chat: Chat, head_id: int | None) -> list[Character]:
        return [self.character(k) for k in await self.store.scenes.present(chat, head_id)]

    @staticmethod
    def is_scene(chat: Chat) -> bool:
        return len(chat.cast) > 1

    def participants(self, present: Sequence[Character], user_name: str) -> list[Participant]:
        return [*(Participant(c.id, c.display_name) for c in present), Participant(user_key(user_name), user_name)]

    def names(self, chat: Chat) -> dict[str, str]:
        """Id -> display name of everyone ever in the chat (who is still in the library)."""
        return {k: self.character(k).display_name for k in chat.participants if k == self.host.id or self.directory.get(k)}

    def facts(self, chat: Chat, me: Character, present: Sequence[Character]) -> SceneFacts | None:
        if not self.is_scene(chat):
            return None
        names = {**self.names(chat), me.id: me.display_name}
        return SceneFacts(me.id, chat.character, names, tuple(c.display_name for c in present if c.id != me.id))

    def speaker_of(self, chat: Chat, message: Message) -> str:
        return message.speaker or chat.character

    async def choose(self, chat: Chat, head_id: int | None, present: Sequence[Character], *, user_name: str,
                     text: str = "", forced: str | None = None) -> speakers.Choice:
        """Who answers at `head_id`: `forced` (a name), else the one `text` names,
        else a weighted draw (see speakers.py)."""
        if not present:
            raise CommandError("No character is present in this scene.", "/invite NAME brings one in.")
        if forced:
            wanted = self.find(forced)
            if wanted.id not in {c.id for c in present}:
                raise CommandError(f"{wanted.display_name} is not in this chat.",
                                   f"/invite {wanted.display_name} first, or pick one of: {', '.join(c.display_name for c in present)}.")
            return speakers.Choice(wanted.id, wanted.display_name, f"{wanted.display_name} was picked by you")
        candidates = [speakers.Candidate(c.id, c.display_name, tuple(a for a in (c.nickname, c.name) if a)) for c in present]
        path = await self.store.messages.path(head_id, limit=HISTORY) if head_id else []
        said = [m for m in path if m.role in (Role.USER, Role.ASSISTANT)]
        keys = [user_key(user_name) if m.role is Role.USER else self.speaker_of(chat, m) for m in said]
        previous = keys[-1] if keys else None
        previous_name = user_name if previous == user_key(user_name) else (
            self.character(previous).display_name if previous else "")
        known = {c.key: familiarity.parse(await self.store.world.current(c.key, previous, Field.FAMILIARITY))
                 for c in candidates} if previous else {}
        return speakers.choose(candidates, rng=self.rng, text=text, previous=previous, previous_name=previous_name,
                               familiarity=known, turns_since=speakers.turns_since(keys))

    async def gossip(self, chat: Chat, present: Sequence[Character], first_id: int | None) -> Character | None:
        """The conversation's gossip target: drawn once per conversation (seeded by
        the chat and the conversation's first message, so every process agrees)."""
        here = {c.id for c in present}
        seed = self.settings.seed
        rng = random.Random(f"{seed}:{chat.id}:{first_id}")
        target = speakers.gossip_target(lambda: [key for key in self.directory.ids() if key not in here],
                                        self.gossip_rate, rng)
        return self.character(target) if target else None
