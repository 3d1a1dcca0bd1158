"""Corrections replace what they correct: once you say "actually ..., not X",
every memory layer that still shows X shows it as past, and the prompt says
what is true now, on the path where you said it and on no other."""

from __future__ import annotations

from omoide.chat.session import ChatSession
from omoide.config.settings import Settings
from omoide.domain.chat import MessageStatus, Role
from omoide.memory.corrections import stale_values
from omoide.store import Store
from omoide.store.messages import insert_message
from tests.integration.test_memory_rot import MIKA, Faithful, say
from tests.scripted import ScriptedBackend


def memory_layer(session: ChatSession) -> str:
    assert session.last_prompt is not None
    return "\n".join(layer.text for layer in session.last_prompt.layers if layer.name != "window")


async def test_a_corrected_value_shows_as_past_in_the_summary_and_the_correction_is_told(store: Store) -> None:
    session = await ChatSession.open(store, MIKA, Settings(user_name="Kai", recent_messages=2, summary_threshold=3),
                                     ScriptedBackend(default=Faithful()))
    await say(session, "My cat is called Biscuit-1001, he sleeps all day.")
    await session.tree.save_branch("before-fix")
    for i in range(3):
        await say(session, f"Ordinary talk {i}.")
    summary = (await session.memory()).summary
    assert summary is not None and "Biscuit-1001" in summary.content
    await say(session, "Actually my cat is Mochi-5050 now, not Biscuit-1001.")
    await say(session, "What a day.")
    layers = memory_layer(session)
    assert "Biscuit-1001 (until " in layers  # the summary's old value, shown as past
    assert "## Corrections" in layers and "Mochi-5050 now, not Biscuit-1001" in layers
    bare = layers.replace("Biscuit-1001 (until", "").replace("not Biscuit-1001", "")
    assert "Biscuit-1001" not in bare, "the old value still stands somewhere as if current"
    # Back before the correction, nothing was corrected.
    await session.tree.restore_branch("before-fix")
    await say(session, "Hello again.")
    assert "## Corrections" not in memory_layer(session) and "(until" not in memory_layer(session)


async def test_a_correction_said_long_ago_in_a_long_chat_is_still_told(store: Store) -> None:
    session = await ChatSession.open(store, MIKA, Settings(user_name="Kai", recent_messages=4, memory_style="none"),
                                     ScriptedBackend(default=lambda messages: ["Mm."]))
    await say(session, "Actually my cat is Mochi-5050 now, not Biscuit-1001.")
    head = (await session.refresh()).head_id
    async with store.db.write() as conn:  # 300 of your lines since, each with a word a correction may hold
        for n in range(600):
            role = Role.USER if n % 2 == 0 else Role.ASSISTANT
            head = await insert_message(conn, session.chat.id, head, role, f"I am not sure about the weather, day {n}."
                                        if role is Role.USER else "Mm.", MessageStatus.COMPLETE, None, None, store.db.now_iso())
        await conn.execute("UPDATE chats SET head_id = ? WHERE id = ?", (head, session.chat.id))
    session.accept_head(head)
    await say(session, "What a long year it was.")
    assert "Mochi-5050 now, not Biscuit-1001" in memory_layer(session), "the correction fell out of the prompt"
    await say(session, "Actually my sister is Ines, not Ana.")  # a turn later, a new one joins it
    layers = memory_layer(session)
    assert "Mochi-5050 now, not Biscuit-1001" in layers and "Ines, not Ana" in layers
    assert layers.count("Mochi-5050 now") == 1


def test_what_counts_as_a_correction() -> None:
    assert stale_values("Actually, I misspoke: my sister's name is Ines, not Ana.") == ("Ana",)
    assert stale_values("I no longer live in London.") == ("London",)
    assert stale_values("I moved from Oslo to Bergen.") == ("Oslo",)
    assert stale_values("I am not sure about that.") == ()
    assert stale_values("Not today, Suzune.") == ()
    assert stale_values("My favourite colour is green.") == ()
