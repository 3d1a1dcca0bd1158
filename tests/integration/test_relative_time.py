"""Relative time in memory: a conversation spread over days (the session's
clock) leaves memory layers that carry the dates things happened, and the
prompt says what day it is, in its volatile tail only, so a turn between two
compressions still only appends to the previous prompt."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from omoide.characters.model import Character
from omoide.chat.session import ChatSession
from omoide.config.settings import Settings
from omoide.store import Store
from tests.scripted import ScriptedBackend

MIKA = Character(id="mika", name="Mika", first_message="*waves* Hi, {{user}}!")
MONDAY = datetime(2026, 3, 2, 19, 0, tzinfo=UTC)


def memory_work(messages: list) -> list:  # type: ignore[type-arg]
    last = str(messages[-1].get("content", ""))
    if "Journey Highlights" in last:
        return ["【Highlight 1】: Kai and Mika went to the aquarium together."]
    if "Summarize" in last or "running summary" in last:
        return ["Kai and Mika talked about the aquarium; she was pleased he came."]
    return ["*nods*"]


@pytest.fixture
def utc(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Stamps are in local time: the test's is UTC."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


async def test_memory_layers_carry_their_dates_and_only_the_tail_says_today(store: Store, utc: None) -> None:
    now = [MONDAY]
    store.clock = lambda: now[0]  # the greeting too
    backend = ScriptedBackend(default=memory_work)
    session = await ChatSession.open(store, MIKA, Settings(user_name="Kai", memory_style="both", recent_messages=4,
                                                           summary_threshold=6, memo_batch=4, memo_recent_messages=4),
                                     backend)
    session.clock = lambda: now[0]
    for day in range(3):  # Monday to Wednesday, a few messages each evening
        for i in range(3):
            now[0] = MONDAY + timedelta(days=day, minutes=10 * i)
            async for _ in session.send(f"Day {day}, line {i}."):
                pass
            await session.wait_for_memory_work()
    now[0] = MONDAY + timedelta(days=5)  # Saturday
    async for _ in session.send("What did we do on Monday?"):
        pass
    await session.wait_for_memory_work()
    reply = await session.head()
    assert reply is not None and reply.parent_id is not None
    prompt = await session.build_prompt(reply.parent_id)  # the question's prompt, with the world's pass done
    layers = {layer.name: layer.text for layer in prompt.layers}
    assert "Current date and time: Saturday 07 March 2026" in layers["tail"]
    # The summary's paragraphs open with the span they tell, in the messages' own stamps.
    assert layers["memory"].split("## Recent Conversation Summary\n", 1)[1].startswith("[03/02 19:00")
    assert "[03/02 " in layers["memos"]  # each memo carries its batch's dates
    # The world: the conversations that ended when the evenings went idle are dated.
    assert "Mika and Kai last talked [03/04 19:20]." in layers["world"]
    # The window's messages carry theirs; nothing but the tail names today.
    assert "[03/04 19:20] Day 2, line 2." in layers["window"]
    head = prompt.messages[0]["content"]
    assert "Saturday" not in head and "03/07" not in head
    # The same prompt five minutes later differs in its tail alone: the clock lives
    # there, every dated layer before it is byte for byte what it was.
    now[0] += timedelta(minutes=5)
    later = await session.build_prompt(reply.parent_id)
    assert later.messages[:-1] == prompt.messages[:-1] and prompt.messages[-1]["role"] == "system"
    assert "Saturday 07 March 2026, 19:05" in later.messages[-1]["content"]
