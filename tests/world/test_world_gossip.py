"""Offscreen mentions: what a listener learns about someone who was not there."""

from __future__ import annotations

from omoide.llm.stamps import split_stamp
from omoide.store import Store
from omoide.domain.world import Field, UpdateKind
from tests.scripted import ScriptedBackend
from tests.world.test_world_pass import end_now, open_suzune, talk
from tests.world_script import WorldScript

LEARNED = "Wren is afraid of the dark and sleeps with the lighthouse lamp on."


def gossip_script(**kw: object) -> WorldScript:
    return WorldScript(
        offscreen=LEARNED,
        memory=lambda text: "Wren is an old lighthouse keeper who fears the dark." if "about Wren" in text
        else "Kai is a regular who gossips about the lighthouse keeper.",
        descriptor=lambda text: "friend's friend" if "is Wren to" in text else "regular customer",
        **kw,
    )


async def test_a_fact_about_an_absent_character_reaches_the_listener(store: Store) -> None:
    script = gossip_script(offscreen_goal="Ask Wren whether the lamp keeps her up.")
    session = await open_suzune(store, script)
    await talk(session, "Did you know Wren is afraid of the dark?", "Anyway, a coffee please.")
    conversation, result = await end_now(session)
    assert result.failed == []
    [mention] = conversation.mentions
    assert mention.key == "wren" and mention.name == "Wren"
    assert script.steps() == ["summary", "memory", "goal", "descriptor", "offscreen", "memory", "descriptor", "offscreen_goal", "global"]
    assert "Kai: Did you know Wren is afraid of the dark?" in dict(script.asked)["offscreen"]

    wren = (await store.world.view("suzune")).about("wren")
    assert [split_stamp(i.text)[1] for i in wren.offscreen] == [LEARNED]
    assert wren.memory == "Wren is an old lighthouse keeper who fears the dark."
    assert wren.descriptor == "friend's friend"
    assert wren.goal == "Ask Wren whether the lamp keeps her up."
    assert wren.familiarity == 0  # hearing about someone is not knowing them
    offscreen = next(u for u in await store.world.updates(conversation_id=conversation.id) if u.field is Field.OFFSCREEN)
    assert offscreen.message_id == mention.message_id != conversation.end_id  # the message that named her
    assert (await store.world.view("wren")).relationships == {}


async def test_the_old_goal_may_be_kept_and_nothing_learned_changes_nothing(store: Store) -> None:
    script = gossip_script(offscreen_goal="KEEP")
    session = await open_suzune(store, script)
    await talk(session, "Wren says hi.")
    await end_now(session)
    assert (await store.world.view("suzune")).about("wren").goal == ""
    kept = [u for u in await store.world.updates(owner="suzune") if u.step == "offscreen_goal"]
    assert kept[0].kind is UpdateKind.LLM and kept[0].after == "KEEP"

    script.answers["offscreen"] = "NOTHING."
    script.asked.clear()
    await talk(session, "Wren again, nothing new.")
    await end_now(session)
    assert "memory" in script.steps() and script.steps().count("memory") == 1  # only toward Kai
    assert [split_stamp(i.text)[1] for i in (await store.world.view("suzune")).about("wren").offscreen] == [LEARNED]


async def test_a_mention_during_the_chat_reminds_the_speaker_in_a_hidden_note(store: Store) -> None:
    chat = ScriptedBackend()
    session = await open_suzune(store, gossip_script(), chat)
    await talk(session, "Wren is afraid of the dark.")
    note = "Wren was just mentioned. Suzune has no memories of Wren beyond what is said here."
    assert note in chat.calls[-1]["messages"][-1]["content"]
    await end_now(session)
    await talk(session, "Have you seen Wren lately?")
    tail = chat.calls[-1]["messages"][-1]["content"]
    assert "## Mentioned\nWren was just mentioned. What Suzune remembers of Wren: Wren is, to Suzune: friend's friend." in tail
    assert "fears the dark" in tail
    assert "Wren was just mentioned" not in chat.calls[-1]["messages"][0]["content"]
    assert all("just mentioned" not in m.content for m in await session.transcript())
    assert any("Wren was just mentioned" in layer.text for layer in session.last_prompt.layers if layer.name == "tail")  # type: ignore[union-attr]


async def test_amnesia_world_hides_world_memory_and_mention_notes_until_off(store: Store) -> None:
    chat = ScriptedBackend()
    session = await open_suzune(store, gossip_script(), chat)
    await talk(session, "Wren is afraid of the dark.")
    await end_now(session)
    assert await session.user.set_amnesia(["world"]) == ("world",)
    await talk(session, "Have you seen Wren lately?")
    system, tail = chat.calls[-1]["messages"][0]["content"], chat.calls[-1]["messages"][-1]["content"]
    assert "What Suzune carries" not in system and "regular customer" not in system
    assert "Wren was just mentioned" not in tail and "fears the dark" not in system + tail
    assert "world" not in {layer.name for layer in session.last_prompt.layers}  # type: ignore[union-attr]
    assert (await store.world.view("suzune")).about("wren").memory, "nothing was deleted"
    assert await session.user.set_amnesia([]) == ()
    await talk(session, "And Wren?")
    system, tail = chat.calls[-1]["messages"][0]["content"], chat.calls[-1]["messages"][-1]["content"]
    assert "What Suzune carries" in system and "regular customer" in system
    assert "## Mentioned\nWren was just mentioned." in tail


def test_the_mention_scanner_finds_names_among_thousands_by_whole_words() -> None:
    """Names of several words, any letter case, never inside another word; a library
    of 5,000 other characters changes nothing but what is tried."""
    from omoide.world.mentions import Known, MentionScanner

    crowd = [Known(f"k{i}", f"Keeper {i}", (f"Keeper Number {i}",)) for i in range(5000)]
    wanted = [Known("mara", "Mara", ("Mara Vell", "Mara")), Known("obrien", "O'Brien", ("O'Brien",)),
              Known("you", "You", ("you",))]
    scanner = MentionScanner([*crowd, *wanted], present=["you"])
    assert [k.key for k in scanner.scan("Did MARA VELL see o'brien at the pier?")] == ["mara", "obrien"]
    assert scanner.scan("Tamara and O'Briens left.") == []
    assert [k.key for k in scanner.scan("keeper number 4321 waved")] == ["k4321"]
