"""Opening a chat: a new one with its greeting, or a group scene's chat."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, datetime

from omoide.characters.macros import MacroEnv, expand
from omoide.characters.model import Character
from omoide.domain.chat import Chat
from omoide.store import Store


def _who(names: Sequence[str]) -> str:
    return f"Chat with {names[0]}" if len(names) == 1 else "Scene with " + ", ".join(names)


def chat_title(names: Sequence[str], started: datetime) -> str:
    """A chat's own title until it is renamed: who is in it and when it began
    ("Chat with Suzune · Dec 1, 21:40"), so two chats with Suzune differ."""
    when = started.astimezone()
    return f"{_who(names)} · {when:%b} {when.day}, {when:%H:%M}"


_STAMP = re.compile(r" · [A-Z][a-z]{2} \d{1,2}, \d\d:\d\d(?: \(\d+\))?")


def retitled(title: str, before: Sequence[str], after: Sequence[str]) -> str | None:
    """The title for the cast `after`, when `title` is the one omoide gave the cast
    `before` (now, or before chats carried their date); None when the user named it."""
    if not before or not after or not title.startswith(_who(before)):
        return None
    rest = title[len(_who(before)):]
    if rest and not _STAMP.fullmatch(rest):
        return None
    return _who(after) + rest


async def _free(store: Store, character_id: str, title: str) -> str:
    """`title`, or `title (2)` ... when another chat with the character has it (two begun in one minute)."""
    taken = {c.title for c in await store.chats.list(character_id, include_archived=True)}
    n, free = 1, title
    while free in taken:
        n += 1
        free = f"{title} ({n})"
    return free


async def create_chat(store: Store, character: Character, user_name: str, *, group: Sequence[str] = ()) -> Chat:
    """A new chat opening on the character's greeting (an empty first message
    opens with the first alternate, as SillyTavern does). Its macros are
    expanded now, once, as SillyTavern does when it writes the greeting:
    "It is {{time}}" is stored with the time the chat began."""
    now = datetime.now(UTC)
    env = MacroEnv(char=character.display_name, user=user_name, group=tuple(group), now=now,
                   pick_seed=f"greeting:{character.id}:{now.isoformat()}")

    def fill(text: str) -> str:
        return expand(text, env).strip()

    greetings = [g for g in (fill(t) for t in [character.first_message, *character.alternate_greetings]) if g]
    names = list(group) or [character.display_name]
    return await store.chats.create(
        character.id, title=await _free(store, character.id, chat_title(names, now)),
        greeting=greetings[0] if greetings else None, alternate_greetings=greetings[1:],
    )


async def scene_chat(store: Store, cast: Sequence[Character], user_name: str, *, new: bool = False) -> Chat:
    """The newest chat with exactly this cast (in any order), or a new one: the
    first character hosts (its greeting opens the scene)."""
    host, keys = cast[0], [c.id for c in cast]
    if not new:
        for chat in await store.chats.list(host.id):
            if set(chat.cast) == set(keys):
                return chat
    chat = await create_chat(store, host, user_name, group=[c.display_name for c in cast])
    await store.scenes.add(chat.id, keys, opening=True)
    return await store.chats.get(chat.id)
