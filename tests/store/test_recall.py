"""The full-text lookups a turn makes read the index's matches, never the whole chat."""

from __future__ import annotations

from omoide.domain.chat import MessageStatus, Role
from omoide.memory.corrections import CUES
from omoide.store import Store
from omoide.store.messages import insert_message

STEP = 50
"""SQLite instructions between two calls of the progress handler."""


async def said_with_steps(store: Store, chat_id: int) -> tuple[int, list[str]]:
    """The work (SQLite instructions / STEP) of the corrections' lookup, and what it found."""
    ticks = 0

    def tick() -> int:
        nonlocal ticks
        ticks += 1
        return 0

    await store.db.conn.set_progress_handler(tick, STEP)
    try:
        found = await store.recall.said_with(chat_id, CUES, limit=200)
    finally:
        await store.db.conn.set_progress_handler(None, STEP)  # type: ignore[arg-type]
    return ticks, [text for _, _, text in found]


async def test_the_corrections_lookup_costs_the_same_in_a_chat_a_hundred_times_longer(store: Store) -> None:
    chat = await store.chats.create("suzune", greeting="Hello.")
    head = chat.head_id
    lines = ["My cat is Biscuit.", "Nice.", "Actually my cat is Mochi now, not Biscuit.", "Oh!", "I am not sure about tea."]
    for n, text in enumerate(lines * 8):
        head = (await store.messages.add(chat.id, head, Role.USER if n % 2 == 0 else Role.ASSISTANT, text)).id
    short, found_short = await said_with_steps(store, chat.id)

    async with store.db.write() as conn:  # 4,000 more messages with no word a correction holds
        for n in range(4000):
            head = await insert_message(conn, chat.id, head, Role.USER if n % 2 == 0 else Role.ASSISTANT,
                                        f"The rain on the harbor, evening {n}.", MessageStatus.COMPLETE, None, None,
                                        store.db.now_iso())
        await conn.execute("UPDATE chats SET head_id = ? WHERE id = ?", (head, chat.id))
    long, found_long = await said_with_steps(store, chat.id)

    assert found_long == found_short and "Actually my cat is Mochi now, not Biscuit." in found_long
    assert long <= 2 * short + 20, f"{short * STEP} SQLite instructions at 40 messages, {long * STEP} at 4,040: it reads the chat"
