"""Pinned facts: in every prompt of their character, in every chat of it, after
any number of compressions; in no other character's prompt; hidden by
`/amnesia pinned`; kept when the fit cuts the window. Real SQLite, a real
session; one scripted backend is the chat model and the summarizer, and its
memory work keeps nothing of what it is given, so a fact that held only in the
window or the summary is gone after the first compressions."""

from __future__ import annotations

import re
from typing import Any

import pytest

from omoide.characters.model import Character
from omoide.chat.session import ChatSession
from omoide.config.settings import Settings
from omoide.domain.chat import PinSource
from omoide.errors import CommandError
from omoide.llm.base import ChatMessage, is_memory_task
from omoide.store import Store
from tests.integration.test_memory_rot import MIKA, say
from tests.scripted import ScriptedBackend

WREN = Character(id="wren", name="Wren", first_message="Evening.")
FACT = "Kai's cat is called BISCUIT."


def forgetful(messages: list[ChatMessage]) -> list[Any]:
    """Memory work writes a bland line that keeps none of its material; replies echo."""
    if is_memory_task(messages[-1]):
        return ["They talked about the day and little else."]
    return ["Mika nods."]


def system_of(session: ChatSession) -> str:
    assert session.last_prompt is not None
    return str(session.last_prompt.messages[0]["content"])


def layer_names(session: ChatSession) -> list[str]:
    assert session.last_prompt is not None
    return [layer.name for layer in session.last_prompt.layers]


async def compressions(store: Store, chat_id: int) -> int:
    row = await store.db.one("SELECT count(*) FROM summaries WHERE chat_id = ?", (chat_id,))
    assert row is not None
    return int(row[0])


async def test_a_pinned_fact_outlives_twenty_compressions_and_follows_its_character_only(store: Store) -> None:
    settings = Settings(user_name="Kai", recent_messages=4, summary_threshold=3, summary_merge_chars=300)
    backend = ScriptedBackend(default=forgetful)
    session = await ChatSession.open(store, MIKA, settings, backend)
    await say(session, "My cat is called BISCUIT, by the way.")
    pin = await session.pins.pin_text(FACT)
    assert pin.source is PinSource.TYPED
    turns = 0
    while await compressions(store, session.chat.id) < 21:
        await say(session, f"Small talk {turns}.")
        turns += 1
        assert turns < 200, "memory work did not run"
    memory = await session.memory()
    assert memory.summary is not None and "BISCUIT" not in memory.summary.content  # summarised away...
    assert all("BISCUIT" not in m.content for m in memory.window)
    await say(session, "What is my cat called?")
    assert f"- {FACT}" in system_of(session)  # ...but pinned
    assert layer_names(session).index("pinned") < layer_names(session).index("memory")

    other_chat = await ChatSession.open(store, MIKA, settings, ScriptedBackend(default=forgetful), new=True)
    await say(other_chat, "Hello again.")
    assert other_chat.chat.id != session.chat.id
    assert f"- {FACT}" in system_of(other_chat)

    wren = await ChatSession.open(store, WREN, settings, ScriptedBackend(default=forgetful))
    await say(wren, "Hi, Wren.")
    assert "BISCUIT" not in system_of(wren)


async def test_amnesia_pinned_hides_the_pins_and_off_brings_them_back(store: Store) -> None:
    session = await ChatSession.open(store, MIKA, Settings(user_name="Kai"), ScriptedBackend(default=forgetful))
    await session.pins.pin_text(FACT)
    await session.user.set_amnesia(["pinned"])
    await say(session, "Hello.")
    assert "BISCUIT" not in system_of(session) and "pinned" not in layer_names(session)
    await session.user.set_amnesia([])
    await say(session, "Hello again.")
    assert f"- {FACT}" in system_of(session)


async def test_the_fit_cuts_the_window_and_keeps_the_pins(store: Store) -> None:
    settings = Settings(user_name="Kai", context_size=1024, max_tokens=128)
    session = await ChatSession.open(store, MIKA, settings, ScriptedBackend(default=forgetful))
    await session.pins.pin_text(FACT)
    for i in range(6):
        await say(session, f"Story part {i}: " + "the rain kept falling on the old tin roof " * 20)
    assert session.last_prompt is not None and session.last_prompt.dropped  # the window no longer fits whole
    assert f"- {FACT}" in system_of(session)


async def test_a_message_and_a_diary_line_can_be_pinned_and_bad_pins_are_refused(store: Store) -> None:
    backend = ScriptedBackend([["Noted.<save_memory>Kai's sister lives in OSAKA.</save_memory>"]], default=forgetful)
    session = await ChatSession.open(store, MIKA, Settings(user_name="Kai"), backend)
    await say(session, "My sister moved to Osaka.")
    said = (await session.transcript())[-2]
    by_number = await session.pins.pin_message(said.id)
    assert (by_number.content, by_number.source, by_number.message_id) == ("Kai: My sister moved to Osaka.", PinSource.MESSAGE, said.id)
    last = await session.pins.pin_message()
    assert last.content == "Mika: Noted."
    line = await session.pins.pin_diary(1)
    assert (line.content, line.source) == ("Kai's sister lives in OSAKA.", PinSource.DIARY)
    with pytest.raises(CommandError, match="pinned already"):
        await session.pins.pin_text("kai's sister lives in osaka.")
    with pytest.raises(CommandError, match="at most 500"):
        await session.pins.pin_text("x" * 501)
    with pytest.raises(CommandError, match="no message #99999"):
        await session.pins.pin_message(99999)
    with pytest.raises(CommandError, match="no entry 5"):
        await session.pins.pin_diary(5)
    await say(session, "Anything else?")
    system = system_of(session)
    assert "- Kai: My sister moved to Osaka." in system and "- Mika: Noted." in system and "- Kai's sister lives in OSAKA." in system
    await session.pins.unpin(last.id)
    with pytest.raises(CommandError, match="no pin"):
        await session.pins.unpin(last.id)
    await say(session, "Bye.")
    assert "- Mika: Noted." not in system_of(session)
    assert [p.id for p in await session.pins.list()] == [by_number.id, line.id]
    assert (await store.pins.get(last.id)).content == "Mika: Noted."  # unpinned, not deleted


async def test_in_a_scene_each_speaker_reads_its_own_pins(store: Store) -> None:
    from omoide.characters.library import find_character
    from tests.scene.test_scene_session import echo_speaker

    settings = Settings(user_name="Kai", scene_seed=3, gossip_rate=0.0)
    backend = ScriptedBackend(default=echo_speaker)
    scene = await ChatSession.open(store, find_character("suzune"), settings, backend, others=[find_character("wren")])
    await scene.pins.pin_text("Suzune owes Kai a LEMONCAKE.")
    await say(scene, "Wren, good evening.")
    assert "Halloran" in system_of(scene) and "LEMONCAKE" not in system_of(scene)  # Wren spoke
    await say(scene, "Suzune, hello.")
    assert "- Suzune owes Kai a LEMONCAKE." in system_of(scene)
