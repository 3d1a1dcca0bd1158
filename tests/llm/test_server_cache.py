"""A compression on a real llama.cpp server keeps the window in its prompt cache:
the summary's newer parts go in the window where they were written
([memory] summary_placement = "auto", memory/timeline.py), so the reply after a
compression reads what it shares with the last prompt from the cache, as the
status bar's "cache: N read" shows."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from omoide.characters.model import Character
from omoide.chat.session import ChatSession
from omoide.config.settings import Settings
from omoide.llm.openai_compat import OpenAICompatBackend
from omoide.store import Store

pytestmark = pytest.mark.model
MIKA = Character(id="mika", name="Mika", first_message="Welcome to my bakery!",
                 description="{{char}} keeps a small bakery by the station and knows every regular by name. " * 4)
LINES = ["The oven is warm today.", "I brought my sister Aiko along.", "We walked from the harbour in the rain.",
         "Do you still make the melon pan?", "Aiko wants the one with the cat face.", "My train leaves at nine tomorrow.",
         "The lanterns by the station look lovely.", "Let's meet at the autumn fair on Sunday.",
         "I will bring the umbrella back then.", "Thank you for the tea."]


async def reuse_after_compressions(server: str, placement: str, tmp_path: Path, writer: str = "extract") -> list[float]:
    """The share of each reply's prompt the server read from its cache, on the
    replies right after a compression."""
    settings = Settings(base_url=server, model="smollm2", temperature=0.0, max_tokens=12, context_size=4096, user_name="Kai",
                        memory_style="summary", recent_messages=4, summary_threshold=6, memory_writer=writer,
                        summary_placement=placement, recall_passages=0)
    backend = OpenAICompatBackend(settings.backend)
    store = await Store.open(tmp_path / f"{placement}-{writer}.db")
    session = await ChatSession.open(store, MIKA, settings, backend)
    shares: list[float] = []
    compressed = False
    try:
        for line in LINES:
            async for _ in session.send(line):
                pass
            prompt = session.last_prompt
            assert prompt is not None and prompt.usage is not None and prompt.usage.prompt_tokens
            if compressed:
                shares.append((prompt.usage.cache_read_tokens or 0) / prompt.usage.prompt_tokens)
            before = (await session.memory()).summary
            await session.wait_for_memory_work()
            after = (await session.memory()).summary
            compressed = after is not None and (before is None or after.id != before.id)
    finally:
        await backend.aclose()
        await store.close()
    return shares


async def test_the_reply_after_a_compression_reads_the_window_from_the_servers_cache(llama_server_reusing: str, tmp_path: Path) -> None:
    window = await reuse_after_compressions(llama_server_reusing, "auto", tmp_path)
    head = await reuse_after_compressions(llama_server_reusing, "head", tmp_path)
    assert len(window) >= 2 and len(head) >= 2, (window, head)
    # With the new part before the window, the server reads again everything after the card.
    assert min(window) > 0.6, window
    assert sum(window) / len(window) > sum(head) / len(head) + 0.1, (window, head)


async def test_on_a_server_of_several_slots_the_chat_keeps_its_slot_while_the_model_writes_its_memory(
        llama_server_slots: str, tmp_path: Path) -> None:
    # The model writes the summaries here: each is a request of its own, on memory work's slot. Sent with no
    # slot, the reply after a compression could share under half its prompt with the chat's slot, and the
    # server then gave it the slot used longest ago: 36-77 % read from the cache (mean 57 %), 60-85 % now
    # (mean 73 %; the model's summary parts are new text the cache cannot hold).
    shares = await reuse_after_compressions(llama_server_slots, "auto", tmp_path, writer="model")
    assert len(shares) >= 2, shares
    assert min(shares) > 0.5 and sum(shares) / len(shares) > 0.65, shares


async def test_each_reply_is_read_back_from_the_servers_cache_on_the_next_turn(llama_server_reusing: str, tmp_path: Path) -> None:
    # The server caches a reply as the model wrote it. The next prompt shows it with no stamp before it, so the
    # server reads it (and the header before it) from its cache: what it evaluates again is the user's new message
    # and the turn's note. With "[04/01 22:15]" before the reply, the server evaluated the reply again every turn.
    settings = Settings(base_url=llama_server_reusing, model="smollm2", temperature=0.0, max_tokens=80, context_size=4096,
                        user_name="Kai", memory_style="summary", summary_threshold=100, recall_passages=0)
    backend = OpenAICompatBackend(settings.backend)
    store = await Store.open(tmp_path / "replies.db")
    now = [datetime(2026, 4, 1, 20, 15, tzinfo=UTC)]  # today's date in the prompt would pick the replies' lengths
    store.clock = lambda: now[0]
    session = await ChatSession.open(store, MIKA, settings, backend)
    session.clock = lambda: now[0]
    turns: list[tuple[int, int, int]] = []  # prompt tokens, read from the cache, reply tokens
    try:
        for line in LINES[:6]:
            now[0] += timedelta(minutes=3)
            async for _ in session.send(line):
                pass
            await session.wait_for_memory_work()
            usage = session.last_prompt.usage if session.last_prompt else None
            assert usage is not None and usage.prompt_tokens and usage.completion_tokens is not None
            turns.append((usage.prompt_tokens, usage.cache_read_tokens or 0, usage.completion_tokens))
    finally:
        await backend.aclose()
        await store.close()
    checked = 0
    for (prompt, _, reply), (next_prompt, read, _) in zip(turns, turns[1:], strict=False):
        if reply < 30:  # with its header, too short for a run the server shifts into place (32 tokens)
            continue
        checked += 1
        # Evaluated again: less than what the turn added (the reply, the new message and their headers).
        assert next_prompt - read < next_prompt - prompt, turns
    assert checked >= 2, turns
