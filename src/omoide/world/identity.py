"""Who the user is: one name, kept in one place.

The profile's name (what every character knows about you, `omoide profile`)
is the name. The `user_name` setting only fills it when the profile has none
yet (a config written before the profile existed); from then on the profile
is read, and `Settings.user_name` of a running omoide is set from it, so
{{user}}, message headers, the prompt and exports all say the same. Personas
(`/persona NAME`) are worn on top of it, for one chat at a time.
"""

from __future__ import annotations

from omoide.characters.model import Character, substitute
from omoide.config.settings import Settings
from omoide.domain.chat import Chat
from omoide.errors import CommandError
from omoide.store import Store

DEFAULT_NAME = "You"
"""The name until you give one (the `user_name` setting's default)."""
MAX_NAME = 40


def clean_name(text: str) -> str:
    """A name as it will be stored: one line, spaces collapsed; refused if empty or long."""
    name = " ".join(text.split())
    if not name:
        raise CommandError("The name is empty.", "Type the name the characters should call you.")
    if len(name) > MAX_NAME:
        raise CommandError(f"The name is {len(name)} characters long; the most is {MAX_NAME}.", "Use a shorter name or a nickname.")
    if any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F for c in name):
        raise CommandError("The name holds control characters.", "Type it again with letters, digits and punctuation only.")
    return name


async def resolve(settings: Settings, store: Store) -> Settings:
    """`settings` with `user_name` from the profile. A profile with no name yet
    takes the configured `user_name`, if one was configured."""
    profile = await store.profile.get()
    if profile.name:
        return settings if profile.name == settings.user.name else settings.updated(user_name=profile.name)
    if settings.is_set("user_name") and settings.user.name.strip():
        await store.profile.set_field("name", clean_name(settings.user.name))
    return settings


async def rename(store: Store, settings: Settings, name: str) -> str:
    """Make `name` who you are: stored in the profile, and set on `settings`
    itself (every part of a running chat holds that one object)."""
    name = clean_name(name)
    if (await store.profile.get()).name != name:
        await store.profile.set_field("name", name)
    settings.user.name = name
    return name


async def refill_greeting(store: Store, chat: Chat, character: Character, user_name: str) -> bool:
    """A chat nobody has written in yet opens on its greeting with the old name
    in it: fill the greetings (and their alternates) in again with `user_name`.
    True if they were; a chat that has begun is left as it is."""
    messages = await store.messages.tree(chat.id)
    if not messages or any(m.parent_id is not None for m in messages):
        return False
    texts = [t for t in (substitute(g, char=character.display_name, user=user_name).strip()
                         for g in [character.first_message, *character.alternate_greetings]) if t]
    for message, text in zip(sorted(messages, key=lambda m: m.id), texts):
        if message.content != text:
            await store.messages.update(message.id, content=text)
    return True
