"""Opening a chat: a new one with its greeting, or a group scene's chat."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from omoide.characters.macros import MacroEnv, expand
from omoide.characters.model import Character
from omoide.domain.chat import Chat
from omoide.store import Store


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
    return await store.chats.create(
        character.id, title=f"Chat with {character.display_name}",
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
    await store.chats.rename(chat.id, "Scene with " + ", ".join(c.display_name for c in cast))
    await store.scenes.add(chat.id, keys, opening=True)
    return await store.chats.get(chat.id)
