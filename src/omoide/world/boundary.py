"""Knowledge boundaries in the end-of-conversation pass: each character of a
scene remembers only what it witnessed of the conversation, and no step reads
another speaker's prompt (domain/witness.py)."""

from __future__ import annotations

from omoide.domain.chat import Message
from omoide.domain.world import Conversation
from omoide.memory.shared import ChatPrefix
from omoide.store import Store


async def witnessed_by(store: Store, conv: Conversation, messages: list[Message]) -> dict[str, list[Message]] | None:
    """In a scene, what each character of the conversation witnessed of it
    (None in a one-on-one chat: its character witnessed all)."""
    attendance = await store.scenes.attendance(await store.chats.get(conv.chat_id), conv.end_id)
    if not attendance.scene:
        return None
    return {p.key: [m for m in messages if attendance.witnessed(p.key, m.depth)] for p in conv.characters}


async def continues(store: Store, conv: Conversation, chat_id: int, prefix: ChatPrefix) -> bool:
    """Whether the pass may continue the chat's prompt `prefix`: only for the one
    character of a one-on-one conversation, whose prompt it is (a scene's prompt
    holds one speaker's knowledge, which the others' steps must not read), and
    only when that prompt lies on the path through the conversation's end."""
    if chat_id != conv.chat_id or len(conv.characters) != 1:
        return False
    return prefix.head_id is None or await store.messages.is_ancestor(conv.end_id, prefix.head_id)
