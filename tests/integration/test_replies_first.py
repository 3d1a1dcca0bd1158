"""Replies first on the embedded engine: a message sent while memory work is
being written stops that work, is answered, and the work is made again after
the reply, anchored where the chat went on (memory/worker.py, world/gate.py)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from omoide.characters.model import Character
from omoide.chat.events import ReplyDelta, ReplyFinished, TurnEvent
from omoide.chat.session import ChatSession
from omoide.config.settings import Settings
from omoide.llm.base import ChatMessage, Event, TextDelta
from omoide.memory.events import MemoryEvent, MemoryWorkDone, MemoryWorkFailed
from omoide.memory.shared import MEMORY_CACHE_KEY
from omoide.store import Store

pytestmark = pytest.mark.model

BOUND = 300.0
"""Seconds any one wait may take on a busy machine before the test gives up."""
MIKA = Character(id="mika", name="Mika", first_message="*waves* Hi, {{user}}! The bakery just opened.",
                 description="{{char}} keeps a small bakery by the station and knows every regular by name.")
LINES = ["My cat Biscuit knocked the flour off the shelf this morning.", "I moved to Kyoto on the first of May.",
         "Can I have two melon pans, please?", "The oven looks new. When did you buy it?", "See you tomorrow at eight."]


def watched(settings: Settings, log: list[tuple[str, Any]]) -> Any:
    """The embedded backend, noting in `log` (in the order the event loop sees
    them) each memory request sent, each piece of text memory work receives,
    and each memory request that ran to its end."""
    from omoide.llm.local import LocalBackend

    class Watched(LocalBackend):
        memory_writing = asyncio.Event()

        async def stream(self, messages: list[ChatMessage], **kwargs: Any) -> AsyncIterator[Event]:
            memory = kwargs.get("cache_key") == MEMORY_CACHE_KEY
            if memory:
                log.append(("memory sent", [m.get("content") for m in messages]))
            async for event in super().stream(messages, **kwargs):
                if memory and isinstance(event, TextDelta):
                    log.append(("memory text", event.text))
                    self.memory_writing.set()
                yield event
            if memory:
                log.append(("memory answered", None))

    return Watched(settings)


async def test_a_message_sent_during_memory_work_is_answered_first_and_the_work_is_redone(
        store: Store, smollm2_path: Path, omoide_home: Path) -> None:
    log: list[tuple[str, Any]] = []
    # The model writes the summary (on the embedded models 'auto' keeps the story's own words, with no model call).
    backend = watched(Settings(user_name="Kai", recent_messages=2, summary_threshold=3, temperature=0.0,
                               context_size=2048, memory_writer="model"), log)
    memory: list[MemoryEvent] = []
    session = await ChatSession.open(store, MIKA, backend.settings, backend,
                                     on_memory_event=lambda e: (memory.append(e), log.append(("memory event", e))))
    lines = iter(LINES)
    for line in lines:  # talk until memory work is writing
        async for _ in session.send(line):
            pass
        writing = asyncio.ensure_future(backend.memory_writing.wait())
        idle = asyncio.ensure_future(session.wait_for_memory_work())
        done, _ = await asyncio.wait({writing, idle}, timeout=BOUND, return_when=asyncio.FIRST_COMPLETED)
        if writing in done:
            idle.cancel()
            break
        writing.cancel()
        assert idle in done, "memory work neither wrote nor ended in time"
    else:
        pytest.fail("no memory work was due in this chat")
    cut = next(request for kind, request in reversed(log) if kind == "memory sent")
    assert ("memory answered", None) not in log[log.index(("memory sent", cut)):], "memory work ended before the message was sent"
    sent_at = len(log)

    events: list[TurnEvent] = []
    async for event in session.send(next(lines)):
        events.append(event)
        if isinstance(event, ReplyDelta):
            log.append(("reply text", event.text))  # as the user sees it
    reply = next(e.message for e in events if isinstance(e, ReplyFinished))
    async with asyncio.timeout(BOUND):
        await session.wait_for_memory_work()

    during = log[sent_at:]
    replied = [i for i, (kind, _) in enumerate(during) if kind == "reply text"]
    assert replied and any(isinstance(e, ReplyDelta) for e in events), "the reply streamed"
    assert reply.content.strip() and not reply.interrupted
    # While the reply streamed, memory work wrote nothing: it had stopped for it.
    assert not [kind for kind, _ in during[replied[0]:replied[-1]] if kind in ("memory sent", "memory text")]
    # The cut request was sent again after the reply, word for word, and this time answered.
    redone = during.index(("memory sent", cut))
    assert redone > replied[-1]
    assert ("memory answered", None) in during[redone:]
    assert session.gate.preempted >= 1
    assert not [e for e in memory if isinstance(e, MemoryWorkFailed)], [e for e in memory if isinstance(e, MemoryWorkFailed)]
    # Its summary is stored, anchored at the reply the chat went on to (the user carried on along
    # this path), and covers only what was there before the message sent meanwhile.
    done = [e for kind, e in during if kind == "memory event" and isinstance(e, MemoryWorkDone) and e.summary]
    assert done, "the summary was written"
    summary = done[0].summary
    assert summary is not None and summary.content.strip()
    assert summary.anchor_id == reply.id
    assert summary.covers_to_id is not None and summary.covers_to_id < reply.parent_id  # type: ignore[operator]
    state = await store.memory.state(reply.id)
    assert state.summary is not None and state.summary.id >= summary.id


async def test_after_memory_work_the_next_reply_finds_its_prompt_already_evaluated(
        store: Store, smollm2_path: Path, omoide_home: Path) -> None:
    """Memory work changes the start of the next prompt (a summary part, old
    lines gone); the engine evaluates that while the user reads, so the reply
    after it evaluates no more than the reply after any other turn: the
    user's new line and the date."""
    from omoide.llm.local import LocalBackend

    # No passages: they come anew after the window every turn, whatever memory work did; this is about what comes before it.
    settings = Settings(user_name="Kai", recent_messages=4, summary_threshold=6, temperature=0.0, context_size=2048,
                        recall_passages=0)
    backend = LocalBackend(settings)
    memory: list[MemoryEvent] = []
    session = await ChatSession.open(store, MIKA, settings, backend, on_memory_event=memory.append)
    evaluated: list[tuple[bool, int]] = []
    """Per turn: (memory work stored something after the turn before, prompt tokens the engine evaluated)."""
    changed = False
    for line in LINES * 2:
        async for _ in session.send(line):
            pass
        usage = session.turns.last_prompt.usage if session.turns.last_prompt else None
        assert usage is not None and usage.prompt_tokens is not None and usage.cache_read_tokens is not None
        evaluated.append((changed, usage.prompt_tokens - usage.cache_read_tokens))
        before = len(memory)
        async with asyncio.timeout(BOUND):
            await session.wait_for_memory_work()
        changed = any(isinstance(e, MemoryWorkDone) for e in memory[before:])
        if sum(after for after, _ in evaluated) >= 2:
            break
    assert not [e for e in memory if isinstance(e, MemoryWorkFailed)]
    after_memory = [n for after, n in evaluated[1:] if after]
    others = [n for after, n in evaluated[1:] if not after]  # the first reply finds nothing cached
    assert after_memory and others, evaluated
    assert max(after_memory) <= max(others) + 8, evaluated
