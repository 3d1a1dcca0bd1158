"""The memory state at a head is read once and kept until anything is written:
every write after a read, here or by another window, is seen by the next read
on the same head (store/memory.py: MemoryRepository.state)."""

from __future__ import annotations

from pathlib import Path

import pytest

from omoide.domain.chat import DiaryAuthor, Message, Role
from omoide.store import Store


async def _chat(store: Store) -> tuple[int, Message, Message]:
    chat = await store.chats.create("suzune", greeting="Hi")
    said = await store.messages.add(chat.id, chat.head_id, Role.USER, "My cat is called Pickle.")
    reply = await store.messages.add(chat.id, said.id, Role.ASSISTANT, "Pickle! What a name.")
    return chat.id, said, reply


async def test_the_same_state_is_read_once_until_something_is_written(store: Store) -> None:
    _, _, reply = await _chat(store)
    first = await store.memory.state(reply.id)
    statements = []
    await store.db.conn.set_trace_callback(statements.append)
    again = await store.memory.state(reply.id)
    await store.db.conn.set_trace_callback(None)
    assert again == first
    assert statements == ["PRAGMA data_version"], "the kept state is checked, not read again"


async def test_a_diary_entry_or_summary_written_after_a_read_is_in_the_next_read(store: Store) -> None:
    chat_id, said, reply = await _chat(store)
    assert (await store.memory.state(reply.id)).diary == []
    await store.memory.add_diary_entry(chat_id, reply.id, "Kai has a cat, Pickle.", DiaryAuthor.CHARACTER)
    assert [e.content for e in (await store.memory.state(reply.id)).diary] == ["Kai has a cat, Pickle."]
    await store.memory.add_summary(chat_id, reply.id, content="Kai's cat is Pickle.", covers_to_id=said.id, diary_to_id=None)
    state = await store.memory.state(reply.id)
    assert state.summary is not None and state.summary.content == "Kai's cat is Pickle."
    assert [m.content for m in state.window] == ["Pickle! What a name."]


async def test_a_reply_filled_in_after_a_read_is_in_the_next_read(store: Store) -> None:
    _, _, reply = await _chat(store)
    assert (await store.memory.state(reply.id)).window[-1].content == "Pickle! What a name."
    await store.messages.update(reply.id, content="Pickle! A fine name for a cat.")
    assert (await store.memory.state(reply.id)).window[-1].content == "Pickle! A fine name for a cat."


async def test_what_another_window_writes_is_in_the_next_read(store: Store, tmp_path: Path) -> None:
    chat_id, _, reply = await _chat(store)
    assert (await store.memory.state(reply.id)).diary == []
    other = await Store.open(tmp_path / "omoide.db")  # another window, `omoide say`: its own connection
    try:
        await other.memory.add_diary_entry(chat_id, reply.id, "Written in the other window.", DiaryAuthor.USER)
    finally:
        await other.close()
    assert [e.content for e in (await store.memory.state(reply.id)).diary] == ["Written in the other window."]


async def test_a_read_inside_a_write_that_is_rolled_back_is_not_kept(store: Store) -> None:
    chat_id, _, reply = await _chat(store)
    with pytest.raises(RuntimeError):
        async with store.db.write() as conn:
            await conn.execute(
                "INSERT INTO diary_entries (chat_id, message_id, author, content, created_at) VALUES (?, ?, 'user', ?, ?)",
                (chat_id, reply.id, "never committed", store.db.now_iso()),
            )
            inside = await store.memory.state(reply.id)  # the same connection sees its own open write
            assert [e.content for e in inside.diary] == ["never committed"]
            raise RuntimeError("the write fails")
    assert (await store.memory.state(reply.id)).diary == []


async def test_changing_a_state_read_does_not_change_the_next_one(store: Store) -> None:
    _, _, reply = await _chat(store)
    state = await store.memory.state(reply.id)
    state.window.clear()
    assert [m.content for m in (await store.memory.state(reply.id)).window] == ["Hi", "My cat is called Pickle.", "Pickle! What a name."]


async def test_a_window_limit_reads_the_newest_messages_of_the_same_window(store: Store) -> None:
    chat_id, said, reply = await _chat(store)
    head = reply
    for n in range(5):
        head = await store.messages.add(chat_id, head.id, Role.USER, f"line {n}")
    whole = await store.memory.state(head.id)
    assert (await store.memory.state(head.id, window_limit=3)).window == whole.window[-3:]
    await store.memory.add_summary(chat_id, head.id, content="So far.", covers_to_id=said.id, diary_to_id=None)
    after = await store.memory.state(head.id)
    assert len(after.window) == 6
    assert (await store.memory.state(head.id, window_limit=100)).window == after.window, "still stops at the summary"
    assert (await store.memory.state(head.id, window_limit=2)).window == after.window[-2:]
