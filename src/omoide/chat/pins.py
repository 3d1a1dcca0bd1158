"""Pinned facts (/pin, /pins, /unpin): facts kept in every prompt of the chat's
character, in every chat of it, whatever is compressed. A pin is typed, or the
words of a message or a diary line copied when it is pinned."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from omoide.chat.state import ChatState
from omoide.domain.chat import DiaryEntry, Message, Pin, PinSource, Role
from omoide.errors import CommandError, NotFound
from omoide.store import Store

MAX_PIN = 500
"""Characters in one pin: it is in every prompt, so a fact, not a scene."""


def pin_content(text: str) -> str:
    """One line, checked: what a pin holds."""
    content = " ".join(text.split())
    if not content:
        raise CommandError("There is nothing to pin.", "/pin TEXT pins a fact; /pin alone pins the last message.")
    if len(content) > MAX_PIN:
        raise CommandError(f"That is {len(content)} characters; a pin holds at most {MAX_PIN}.",
                           "Pin the fact itself in a sentence: /pin TEXT.")
    return content


async def add_pin(store: Store, character: str, text: str, source: PinSource = PinSource.TYPED, *,
                  chat_id: int | None = None, message_id: int | None = None, diary_id: int | None = None) -> Pin:
    """Pin `text` for `character` (the CLI's --add, and every /pin)."""
    content = pin_content(text)
    same = next((p for p in await store.pins.list(character) if p.content.casefold() == content.casefold()), None)
    if same is not None:
        raise CommandError(f"That is pinned already, as #{same.id}.", "/pins (or `omoide pins CHARACTER`) lists the pins.")
    return await store.pins.add(character, content, source, chat_id=chat_id, message_id=message_id, diary_id=diary_id)


async def remove_pin(store: Store, character: str, pin_id: int) -> Pin:
    try:
        return await store.pins.remove(character, pin_id)
    except NotFound as exc:
        raise CommandError(exc.message, exc.hint) from exc


class ChatPins:
    def __init__(self, state: ChatState, character: str, *, speaker_name: Callable[[Message], str],
                 diary: Callable[[], Awaitable[list[DiaryEntry]]]) -> None:
        self.state = state
        self.store = state.store
        self.character = character
        """Whose pins these are: the chat's character (in a scene, each speaker reads its own)."""
        self._speaker_name = speaker_name
        self._diary = diary

    async def list(self) -> list[Pin]:
        return await self.store.pins.list(self.character)

    async def _add(self, content: str, source: PinSource, *, message_id: int | None = None, diary_id: int | None = None) -> Pin:
        return await add_pin(self.store, self.character, content, source, chat_id=self.state.chat_id,
                             message_id=message_id, diary_id=diary_id)

    async def pin_text(self, text: str) -> Pin:
        return await self._add(text, PinSource.TYPED)

    async def pin_message(self, message_id: int | None = None) -> Pin:
        """Pin a message of this chat by its number (None: the last message), as 'Name: words'."""
        if message_id is None:
            message = await self.state.head()
            if message is None:
                raise CommandError("The chat is empty; there is no message to pin.", "/pin TEXT pins a fact you type.")
        else:
            try:
                message = await self.store.messages.get(message_id)
            except NotFound:
                message = None
            if message is None or message.chat_id != self.state.chat_id:
                raise CommandError(f"This chat has no message #{message_id}.",
                                   "/search shows message numbers; /pin alone pins the last message.")
        if message.role not in (Role.USER, Role.ASSISTANT) or not message.content.strip():
            raise CommandError(f"Message #{message.id} has no words to pin.", "/pin TEXT pins a fact you type.")
        return await self._add(f"{self._speaker_name(message)}: {message.content}", PinSource.MESSAGE, message_id=message.id)

    async def pin_diary(self, number: int = 1) -> Pin:
        """Pin a diary entry: 1 is the newest in the diary pane, 2 the one before..."""
        entries = await self._diary()
        if not 1 <= number <= len(entries):
            raise CommandError(
                f"The diary has no entry {number}." if entries else "The diary is empty.",
                f"/pin diary N counts from the newest entry (1) to the oldest ({len(entries)})." if entries
                else "/remember TEXT writes in it; /pin TEXT pins a fact.",
            )
        entry = entries[-number]
        return await self._add(entry.content, PinSource.DIARY, diary_id=entry.id)

    async def unpin(self, pin_id: int) -> Pin:
        return await remove_pin(self.store, self.character, pin_id)
