"""Group scenes through ChatSession, on a real SQLite file with scripted backends."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from omoide.characters.library import find_character
from omoide.config.settings import Settings
from omoide.domain.chat import Role
from omoide.chat.events import ReplyFinished
from omoide.chat.session import ChatSession
from omoide.store import Store
from omoide.domain.world import user_key
from tests.scripted import ScriptedBackend
from tests.world_script import WorldScript

KAI = user_key("Kai")


def settings(**kw: object) -> Settings:
    base: dict[str, object] = dict(user_name="Kai", context_size=4096, max_tokens=200, scene_seed=7, gossip_rate=0.0)
    base.update(kw)
    return Settings(**base)  # type: ignore[arg-type]


def add_mika(home: Path) -> None:
    folder = home / "data" / "characters" / "mika"
    folder.mkdir(parents=True)
    (folder / "character.toml").write_text('name = "Mika"\ndescription = "A postman who knows everyone."\nfirst_message = "Post!"\n')


def echo_speaker(messages: list) -> list:  # type: ignore[type-arg]
    """Each reply says whose prompt it was answering (the card's first line names the speaker)."""
    system = str(messages[0]["content"])
    who = "Wren" if "Halloran" in system else "Suzune" if "café" in system.lower() else "?"
    return [f"({who} speaking)"]


async def open_scene(store: Store, *, chat: ScriptedBackend | None = None, script: WorldScript | None = None,
                     **kw: object) -> ChatSession:
    summarizer = ScriptedBackend(default=(script or WorldScript()).default(), model="scripted-summarizer")
    return await ChatSession.open(store, find_character("suzune"), settings(**kw), chat or ScriptedBackend(default=echo_speaker),
                                  summarizer=summarizer, others=[find_character("wren")])


async def say(session: ChatSession, text: str, **kw: str) -> list[tuple[str, str]]:
    out = []
    async for event in session.send(text, **kw):
        if isinstance(event, ReplyFinished):
            out.append((session.scene.speaker_name(event.message), event.message.content))
    await session.memory_worker.wait()
    return out


async def test_a_scene_opens_with_both_and_the_named_one_answers(store: Store) -> None:
    session = await open_scene(store)
    assert [c.id for c in session.scene.present] == ["suzune", "wren"]
    assert session.chat.cast == ("suzune", "wren") and session.scene.is_scene
    assert await say(session, "Wren, did you bring the charts?") == [("Wren", "(Wren speaking)")]
    assert "Wren: was named in the message" in session.last_prompt.speaker.replace("Wren was", "was")  # type: ignore[union-attr]
    assert await say(session, "Suzune, coffee?") == [("Suzune", "(Suzune speaking)")]
    assert await say(session, "Anyone?", speaker="wren") == [("Wren", "(Wren speaking)")]
    # Reopening finds the same scene.
    again = await open_scene(store)
    assert again.chat.id == session.chat.id


async def test_each_prompt_is_the_speakers_own_and_names_the_others(store: Store) -> None:
    backend = ScriptedBackend(default=echo_speaker)
    session = await open_scene(store, chat=backend)
    await say(session, "Wren, a map please.")
    await say(session, "Suzune, what do you think of it?")
    messages = backend.calls[-1]["messages"]
    system = messages[0]["content"]
    assert "Suzune is in a scene with Wren, Kai." in system
    assert "goal for this conversation" not in system
    window = [m for m in messages[1:] if m["role"] != "system"]
    # Wren's line reaches Suzune as someone else's, named; Kai's too.
    assert window[-1]["role"] == "user"
    assert "Wren: " in window[-1]["content"] and "(Wren speaking)" in window[-1]["content"]
    assert "Kai: " in window[-1]["content"] and "what do you think" in window[-1]["content"]


async def test_continue_three_gives_three_character_turns_and_next_picks(store: Store) -> None:
    session = await open_scene(store)
    await say(session, "Hello both.")
    before = len(await session.transcript())
    finished = [e async for e in session.continue_turns(3) if isinstance(e, ReplyFinished)]
    assert len(finished) == 3
    path = await session.transcript()
    assert len(path) == before + 3 and all(m.role is Role.ASSISTANT for m in path[-3:])
    speakers = [m.speaker for m in path[-4:]]
    assert all(a != b for a, b in zip(speakers, speakers[1:]))  # nobody answers itself with another there
    [reply] = [e.message async for e in session.next_turn("Suzune") if isinstance(e, ReplyFinished)]
    assert reply.speaker == "suzune"


async def test_invite_leave_and_undo_follow_the_tree(store: Store, omoide_home: Path) -> None:
    add_mika(omoide_home)
    session = await open_scene(store)
    await say(session, "Hi.")
    note = await session.scene.invite("Mika")
    assert note.role is Role.SYSTEM and note.stage == "invite" and note.content == "Mika joins the scene."
    assert [c.id for c in session.scene.present] == ["suzune", "wren", "mika"]
    assert (await store.chats.get(session.chat.id)).cast == ("suzune", "wren", "mika")
    assert await say(session, "Mika, any letters?") == [("Mika", "(? speaking)")]
    await session.scene.leave("wren")
    assert [c.id for c in session.scene.present] == ["suzune", "mika"]
    await session.tree.undo()  # back before the leave... and before the last exchange
    await session.refresh()
    assert "wren" in [c.id for c in session.scene.present]


async def test_a_swipe_regenerates_the_same_speaker_and_save_memory_goes_to_the_speakers_diary(store: Store) -> None:
    backend = ScriptedBackend(default=echo_speaker)
    backend.add(["Charts are ready. <save_memory>Kai asked for charts.</save_memory>"])
    session = await open_scene(store, chat=backend)
    await say(session, "Wren, charts?")
    [entry] = (await session.memory()).diary
    assert entry.owner == "wren"
    async for _ in session.regenerate():
        pass
    group, _index = await session.tree.swipes()
    assert [m.speaker for m in group] == ["wren", "wren"]
    await say(session, "Suzune?")
    assert "Kai asked for charts." not in backend.calls[-1]["messages"][0]["content"]
    assert "Kai asked for charts." not in str(backend.calls[-1]["messages"][-1]["content"])


async def test_gossip_target_in_the_prompt_at_rate_one_and_never_at_zero(store: Store, omoide_home: Path) -> None:
    add_mika(omoide_home)
    backend = ScriptedBackend(default=echo_speaker)
    session = await open_scene(store, chat=backend, gossip_rate=1.0)
    await say(session, "Wren?")
    assert "## Mika, on Wren's mind" in backend.calls[-1]["messages"][0]["content"]
    assert session.last_prompt is not None and session.last_prompt.gossip == "Mika"
    from omoide.tui.screens.inspector import inspector_text

    shown = inspector_text(session.last_prompt)
    assert "Gossip target of this conversation: Mika" in shown and "Speaker: Wren: Wren was named in the message" in shown
    quiet_backend = ScriptedBackend(default=echo_speaker)
    quiet = await ChatSession.open(store, find_character("suzune"), settings(gossip_rate=0.0), quiet_backend, new=True)
    for _ in range(5):
        await say(quiet, "Hello")
    assert all("on Suzune's mind" not in c["messages"][0]["content"] for c in quiet_backend.calls)


async def test_end_gives_every_pair_a_relationship_and_familiarity(store: Store, omoide_home: Path) -> None:
    add_mika(omoide_home)
    session = await open_scene(store)
    await say(session, "Wren, Suzune, meet each other.")
    async for _ in session.next_turn():
        pass
    conversation = await session.end_conversation(background=False)
    assert {p.key for p in conversation.participants} == {"suzune", "wren", KAI}
    result = await session.world.run(conversation.id)
    assert result.failed == []
    suzune, wren = await store.world.view("suzune"), await store.world.view("wren")
    assert suzune.about("wren").familiarity == pytest.approx(0.15) and suzune.about(KAI).familiarity == pytest.approx(0.15)
    assert wren.about("suzune").familiarity == pytest.approx(0.15) and wren.about(KAI).familiarity == pytest.approx(0.15)
    assert suzune.about("wren").descriptor and wren.about("suzune").memory
    # A later scene without Wren: Suzune's familiarity with her decays.
    await session.scene.invite("Mika")
    await session.scene.leave("Wren")
    await say(session, "Mika, hello.")
    second = await session.end_conversation(background=False)
    await session.world.run(second.id)
    assert (await store.world.view("suzune")).about("wren").familiarity < 0.15
    assert (await store.world.view("suzune")).about("mika").familiarity == pytest.approx(0.15)


def test_random_source_is_injectable() -> None:
    assert random.Random(7).random() == random.Random(7).random()


async def test_summaries_and_memos_of_a_scene_name_each_speaker(store: Store) -> None:
    from omoide.memory.memos import memo_lines, memo_task
    from omoide.memory.summary import summary_request

    session = await open_scene(store)
    await say(session, "Wren, tell us a story.")
    await say(session, "Suzune, your turn.")
    path = [m for m in await session.transcript() if m.role is not Role.SYSTEM]
    names = session.memory_worker.speaker_names
    assert names == {"suzune": "Suzune", "wren": "Wren"}
    text = summary_request("Suzune", "Kai", None, path, names)[-1]["content"]
    assert "Wren: (Wren speaking)" in text and "Suzune: (Suzune speaking)" in text and "Kai: Wren, tell us" in text
    assert "Wren: (Wren speaking)" in memo_task("Suzune", "Kai", memo_lines("Suzune", "Kai", path, names=names))[-1]["content"]


async def test_an_idle_scene_ends_with_everyone_present(store: Store) -> None:
    from datetime import datetime, timedelta, timezone

    session = await open_scene(store, world_min_messages=2)
    await say(session, "Wren, a story?")
    await say(session, "Suzune, and you?")
    later = datetime.now(timezone.utc) + timedelta(hours=4)
    session.world.clock = lambda: later
    await session.world.sweep()
    [conversation] = await store.world.conversations(chat_id=session.chat.id)
    assert conversation.reason == "idle"
    assert {p.key for p in conversation.participants} == {"suzune", "wren", KAI}
    assert (await store.world.view("wren")).about("suzune").familiarity > 0


async def test_diaries_are_compressed_per_character_and_never_leak(store: Store) -> None:
    """Wren's diary fills up and is compressed into a block of her own; Suzune's
    entry stays hers, word for word, and neither reads the other's."""
    def chat(messages: list) -> list:  # type: ignore[type-arg]
        system = str(messages[0]["content"])
        if "Halloran" in system:
            return [f"(Wren) <save_memory>Wren's secret line {len(messages)}.</save_memory>"]
        return ["(Suzune) <save_memory>Suzune's private note.</save_memory>"]

    def summarize(messages: list) -> list:  # type: ignore[type-arg]
        text = str(messages[-1]["content"])
        assert "Suzune's private note" not in text or "Wren's secret" not in text  # one diary per request
        return ["- Wren keeps her secrets in one compressed line."]

    summarizer = ScriptedBackend(default=summarize, model="summarizer")
    session = await ChatSession.open(store, find_character("suzune"), settings(diary_prompt_lines=4, diary_compress_lines=4),
                                     ScriptedBackend(default=chat), summarizer=summarizer, others=[find_character("wren")])
    await say(session, "Suzune, hi.")
    for i in range(5):
        await say(session, f"Wren, story {i}?")
    diary = (await session.memory()).diary
    wren_blocks = [e for e in diary if e.compressed and e.owner == "wren"]
    assert wren_blocks and "compressed line" in wren_blocks[-1].content
    suzune_entries = [e for e in diary if e.owner == "suzune"]
    assert [e.content for e in suzune_entries] == ["Suzune's private note."]
    head = session.chat.head_id
    assert head is not None
    suzune_view = (await session.scene.speaker_memory(head, find_character("suzune")))[0].diary
    wren_view = (await session.scene.speaker_memory(head, find_character("wren")))[0].diary
    assert all(e.owner in (None, "suzune") for e in suzune_view) and any(e.owner == "suzune" for e in suzune_view)
    assert all(e.owner in (None, "wren") for e in wren_view) and wren_view[0].compressed


async def test_a_scene_prompt_reads_as_a_play_script_with_every_speaker_named(store: Store) -> None:
    """The embedded model's play script: each of the others' lines under its own name."""
    from omoide.llm.play_script import script_prompt

    backend = ScriptedBackend(default=echo_speaker)
    session = await open_scene(store, chat=backend)
    await say(session, "Wren, a map please.")
    await say(session, "Suzune, what do you think?")
    messages = backend.calls[-1]["messages"]
    names = messages[0]["speakers"]
    assert names == ["Kai", "Suzune", "Wren"]
    script = script_prompt(messages, names[0], names[1], others=names[2:])
    lines = script.split("The scene so far, as a play script:\n")[1].splitlines()
    said = [line.split("] ", 1)[1] for line in lines if line.startswith("[")]
    assert said == ["Kai: Wren, a map please.", "Wren: (Wren speaking)", "Kai: Suzune, what do you think?", "Suzune:"]
    assert lines[0].startswith("Suzune: *Suzune looks up")  # her greeting: the first line, answering nobody


async def test_naming_the_cast_again_brings_back_one_who_had_left(store: Store) -> None:
    session = await open_scene(store)
    await say(session, "Hi.")
    await session.scene.leave("Wren")
    again = await open_scene(store)
    assert again.chat.id == session.chat.id
    assert [c.id for c in again.scene.present] == ["suzune", "wren"]
    notes = [m.content for m in await again.transcript() if m.stage]
    assert notes == ["Wren leaves the scene.", "Wren joins the scene."]


async def test_in_a_long_scene_each_character_reads_the_beginning_it_witnessed_and_nothing_else(store: Store) -> None:
    """The end-of-conversation pass of a scene longer than world_transcript_chars:
    each character's summary step reads the lasting sentences of the beginning
    it witnessed, never what was said while it was away."""
    script = WorldScript()
    session = await open_scene(store, script=script, world_transcript_chars=1000)
    await say(session, "Wren, Suzune: my goldfinch is named Pipkin, she sings at dawn.")
    await session.scene.leave("Wren")
    await say(session, "Suzune, between us: my sister Odile moved to Tallinn.")
    await session.scene.invite("Wren")
    for n in range(16):
        await say(session, f"The tram was late again this morning, number {n}, and the rain kept tapping on the window.")
    conversation = await session.end_conversation(background=False)
    assert (await session.world.run(conversation.id)).failed == []
    summaries = {text.split(" just had a conversation")[0]: text for step, text in script.asked if step == "summary"}
    assert "my goldfinch is named Pipkin" in summaries["Suzune"] and "my goldfinch is named Pipkin" in summaries["Wren"]
    assert "Odile moved to Tallinn" in summaries["Suzune"]
    assert "Odile" not in summaries["Wren"] and "Tallinn" not in summaries["Wren"]
    assert "number 15" in summaries["Wren"]
