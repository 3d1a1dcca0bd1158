"""memory_writer: on the embedded models ('auto') and wherever it is set to
'extract', summaries, memos and diary compressions keep the story's own
sentences, with no model call: a tiny model's summaries invent what nobody said
(memory/own_words.py, docs/memory-check.md)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from omoide.characters.model import Character
from omoide.chat.session import ChatSession
from omoide.config.settings import Settings
from omoide.domain.chat import DiaryAuthor, DiaryEntry
from omoide.llm.base import ChatMessage, Event
from omoide.memory.events import MemoryEvent, MemoryNotice, MemoryWorkFailed
from omoide.memory.own_words import own_words_diary
from omoide.memory.shared import MEMORY_CACHE_KEY
from omoide.store import Store
from tests.scripted import ScriptedBackend

BOUND = 300.0
MIKA = Character(id="mika", name="Mika", first_message="*waves* Hi, {{user}}! The bakery just opened.",
                 description="{{char}} keeps a small bakery by the station and knows every regular by name.")
LINES = ["My cat Biscuit knocked the flour off the shelf this morning.", "I moved to Kyoto on the first of May.",
         "Can I have two melon pans, please?", "The oven looks new. When did you buy it?", "See you tomorrow at eight."]


async def _talk(session: ChatSession, lines: list[str]) -> None:
    for line in lines:
        async for _ in session.send(line):
            pass
        async with asyncio.timeout(BOUND):
            await session.wait_for_memory_work()


@pytest.mark.model
async def test_on_the_embedded_model_the_summary_keeps_what_was_said_and_asks_the_model_nothing(
        store: Store, smollm2_path: Path, omoide_home: Path) -> None:
    from omoide.llm.local import LocalBackend

    memory_requests: list[list[ChatMessage]] = []

    class Watched(LocalBackend):
        async def stream(self, messages: list[ChatMessage], **kwargs: Any) -> AsyncIterator[Event]:
            if kwargs.get("cache_key") == MEMORY_CACHE_KEY:
                memory_requests.append(messages)
            async for event in super().stream(messages, **kwargs):
                yield event

    settings = Settings(user_name="Kai", recent_messages=2, summary_threshold=3, temperature=0.0, context_size=2048)
    backend = Watched(settings)
    events: list[MemoryEvent] = []
    session = await ChatSession.open(store, MIKA, settings, backend, on_memory_event=events.append)
    await _talk(session, LINES[:3])
    head = await session.head()
    assert head is not None
    state = await store.memory.state(head.id)
    assert state.summary is not None, "a summary was made"
    # Your own words, told as said, and dated; what the model made up would not name the cat and the town.
    assert "Kai said: Their cat Biscuit knocked the flour off the shelf this morning." in state.summary.content
    assert "Kyoto" in state.summary.content
    assert not memory_requests, "no memory request reached the engine"
    assert not [e for e in events if isinstance(e, MemoryWorkFailed | MemoryNotice)], events
    await session.aclose()


async def test_with_memory_writer_extract_memos_and_summary_are_made_with_no_request(store: Store, omoide_home: Path) -> None:
    backend = ScriptedBackend(default=lambda messages: ["Mm, lovely."])
    settings = Settings(user_name="Kai", recent_messages=2, summary_threshold=3, memory_style="both", memo_batch=4,
                        memo_recent_messages=2, memory_writer="extract")
    session = await ChatSession.open(store, MIKA, settings, backend)
    await _talk(session, LINES)
    head = await session.head()
    assert head is not None
    state = await store.memory.state(head.id)
    memos = await store.memos.on_path(head.id, cap=100)
    highlights = [h for memo in memos for h in memo.highlights]
    assert any("Biscuit" in h for h in highlights), highlights
    assert state.summary is not None and "Biscuit" in state.summary.content
    replies = len(LINES)
    assert len(backend.calls) == replies, "only the replies were asked of the model"
    await session.aclose()


async def test_with_memory_writer_model_a_server_still_writes_the_summary(store: Store, omoide_home: Path) -> None:
    def answer(messages: list[ChatMessage]) -> list[str]:
        task = str(messages[-1].get("content", ""))
        return ["Kai's cat Biscuit made a mess; Kai moved to Kyoto."] if "Conversation" in task else ["Mm."]

    backend = ScriptedBackend(default=answer)
    settings = Settings(user_name="Kai", recent_messages=2, summary_threshold=3)
    session = await ChatSession.open(store, MIKA, settings, backend)
    await _talk(session, LINES[:3])
    head = await session.head()
    assert head is not None
    state = await store.memory.state(head.id)
    assert state.summary is not None and "Kai's cat Biscuit made a mess" in state.summary.content
    await session.aclose()


def test_a_diary_compressed_in_its_own_words_keeps_the_weightiest_lines_dated_in_order() -> None:
    start = datetime(2026, 5, 1, 20, 0).astimezone()

    def entry(n: int, text: str, importance: int) -> DiaryEntry:
        return DiaryEntry(n, 1, n, text, DiaryAuthor.CHARACTER, start + timedelta(days=n), importance=importance)

    entries = [entry(1, "Rain again.", 1), entry(2, "Kai promised to bring the blue kite on Sunday.", 5),
               entry(3, "Swept the steps.", 1), entry(4, "Kai's sister Ume is getting married in June.", 4)]
    text = own_words_diary(entries, 2)
    assert text.splitlines() == ["[05/03 20:00] Kai promised to bring the blue kite on Sunday.",
                                 "[05/05 20:00] Kai's sister Ume is getting married in June."]


async def test_a_summary_in_the_storys_own_words_may_be_as_long_as_a_models_and_keeps_a_dense_stretch(
        store: Store, omoide_home: Path) -> None:
    """A stretch where every line tells something lasting: the part keeps
    nearly all of it, as a model's part of that size may; a paragraph's worth
    (900 characters, the old bound) kept six."""
    people = ["Orlaith", "Benedek", "Saoirse", "Tamsin", "Ludmila", "Casimir", "Ottoline", "Peregrine", "Wilhelmina", "Evander"]
    lines = [f"My neighbour {who} is called the best baker in Corran, and {who} lives above the old chemist on Quay Street."
             for who in people]
    backend = ScriptedBackend(default=lambda messages: ["Mm."])
    settings = Settings(user_name="Kai", recent_messages=2, summary_threshold=len(lines) * 2, memory_writer="extract")
    session = await ChatSession.open(store, MIKA, settings, backend)
    await _talk(session, [*lines, "See you."])
    head = await session.head()
    assert head is not None
    state = await store.memory.state(head.id)
    assert state.summary is not None
    kept = [who for who in people if who in state.summary.content]
    assert len(kept) >= 8, (kept, state.summary.content)
    await session.aclose()
