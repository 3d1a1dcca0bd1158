"""The end-of-conversation pass, step by step, on a real SQLite file with a
scripted summarizer; and what the next prompt carries."""

from __future__ import annotations

import asyncio
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest

from omoide.llm.stamps import split_stamp, stamp
from omoide.characters.library import find_character
from omoide.config.settings import Settings
from omoide.errors import ServerFailed
from omoide.chat.session import ChatSession
from omoide.store import Store
from omoide.domain.world import SELF, Field, UpdateKind, user_key
from tests.scripted import ScriptedBackend
from tests.world_script import WorldScript

KAI = user_key("Kai")


def settings(**kw: object) -> Settings:
    base: dict[str, object] = dict(user_name="Kai", context_size=4096, max_tokens=200)
    base.update(kw)
    return Settings(**base)  # type: ignore[arg-type]


async def open_suzune(store: Store, script: WorldScript, chat: ScriptedBackend | None = None, **kw: object) -> ChatSession:
    summarizer = ScriptedBackend(default=script.default(), model="scripted-summarizer")
    return await ChatSession.open(store, find_character("suzune"), settings(**kw), chat or ScriptedBackend(), summarizer=summarizer)


async def talk(session: ChatSession, *lines: str) -> None:
    for line in lines:
        async for _ in session.send(line):
            pass
    await session.memory_worker.wait()


async def end_now(session: ChatSession):  # type: ignore[no-untyped-def]
    conversation = await session.end_conversation(background=False)
    return conversation, await session.world.run(conversation.id)


async def test_every_step_updates_its_field_and_the_log_says_how(store: Store) -> None:
    script = WorldScript()
    session = await open_suzune(store, script)
    await talk(session, "My exam is on Friday.", "Black coffee, please.")
    conversation, result = await end_now(session)
    assert result.failed == [] and not result.stopped
    assert (await store.world.conversation(conversation.id)).state == "done"
    assert script.steps() == ["summary", "memory", "goal", "descriptor", "global"]

    view = await store.world.view("suzune")
    assert [split_stamp(i.text)[1] for i in view.summaries] == [script.answers["summary"]]
    kai = view.about(KAI)
    assert [split_stamp(i.text)[1] for i in kai.pair_summaries] == [script.answers["summary"]]
    assert all(split_stamp(i.text)[0] for i in [*view.summaries, *kai.pair_summaries])  # dated: when it ended
    assert kai.memory == script.answers["memory"]
    assert kai.goal == "Ask whether the exam went well."
    assert kai.descriptor == "regular customer"
    assert kai.familiarity == pytest.approx(0.15)
    assert view.global_memory == script.answers["global"]

    log = await store.world.updates(conversation_id=conversation.id)
    memory = next(u for u in log if u.field is Field.MEMORY)
    assert memory.before is None and memory.after == script.answers["memory"]
    assert memory.template == "world.memory" and memory.model == "scripted · scripted-summarizer"
    assert memory.message_id == conversation.end_id and memory.kind is UpdateKind.LLM
    # The transcript reached the summary step with who said what.
    assert "Kai: My exam is on Friday." in script.asked[0][1] and "Suzune:" in script.asked[0][1]


async def test_the_next_prompt_carries_world_memory_in_its_stable_part(store: Store) -> None:
    chat = ScriptedBackend()
    session = await open_suzune(store, WorldScript(), chat)
    await talk(session, "My exam is on Friday.")
    await end_now(session)
    await talk(session, "I'm back.")
    system = chat.calls[-1]["messages"][0]["content"]
    tail = chat.calls[-1]["messages"][-1]["content"]
    assert "## What Suzune carries\nSuzune keeps the café going" in system
    assert "Kai is, to Suzune: regular customer." in system
    assert "Suzune's goal for this conversation: Ask whether the exam went well." in system
    assert system.index("## What Suzune carries") < system.index("Recent Conversation Summary") if "Recent" in system else True
    assert "exam went well" not in tail
    layers = {layer.name: layer.text for layer in session.last_prompt.layers}  # type: ignore[union-attr]
    assert "regular customer" in layers["world"]


async def test_a_second_conversation_bumps_familiarity_with_diminishing_returns(store: Store) -> None:
    session = await open_suzune(store, WorldScript())
    values = []
    for i in range(3):
        await talk(session, f"Visit {i}.")
        await end_now(session)
        values.append((await store.world.view("suzune")).about(KAI).familiarity)
    gains = [values[0], values[1] - values[0], values[2] - values[1]]
    assert gains[0] > gains[1] > gains[2] > 0
    summaries = (await store.world.view("suzune")).summaries
    assert len(summaries) == 3 and len({i.conversation_id for i in summaries}) == 3


async def test_the_rolling_lists_keep_the_last_n(store: Store) -> None:
    session = await open_suzune(store, WorldScript(summary=lambda text: f"Visit number {text.count('Visit')} was quiet and short."),
                                world_rolling=2)
    for i in range(3):
        await talk(session, f"Visit {i}.")
        await end_now(session)
    view = await store.world.view("suzune")
    assert len(view.summaries) == 2 and len(view.about(KAI).pair_summaries) == 2
    assert len(await store.world.versions("suzune", SELF, Field.SUMMARIES)) == 3  # old versions stay readable


async def test_a_failed_step_keeps_the_previous_value_is_logged_and_retried(store: Store) -> None:
    script = WorldScript()
    session = await open_suzune(store, script)
    await talk(session, "My exam is on Friday.")
    await end_now(session)
    script.answers["goal"] = ServerFailed("The server failed (500).", "Try again later.")
    script.answers["memory"] = "Kai has an exam on Friday and was nervous about it tonight."
    await talk(session, "I'm so nervous.")
    conversation, result = await end_now(session)
    assert len(result.failed) == 1 and "goal" in result.failed[0]
    assert (await store.world.conversation(conversation.id)).state == "incomplete"
    kai = (await store.world.view("suzune")).about(KAI)
    assert kai.goal == "Ask whether the exam went well."  # the previous goal, intact
    assert kai.memory.startswith("Kai has an exam on Friday and was nervous")  # the steps that worked
    failed = [u for u in await store.world.updates(conversation_id=conversation.id) if u.kind is UpdateKind.FAILED]
    assert [(u.field, u.error) for u in failed] == [(Field.GOAL, "The server failed (500).")]

    # The chat goes on; the sweep after the next reply retries only what failed.
    script.answers["goal"] = "Bring him a lucky charm for the exam."
    script.asked.clear()
    await talk(session, "Anyway.")
    await session.world.wait()
    assert script.steps() == ["goal"]
    assert (await store.world.view("suzune")).about(KAI).goal == "Bring him a lucky charm for the exam."
    assert (await store.world.conversation(conversation.id)).state == "done"


async def test_an_unusable_answer_is_a_failure_not_a_memory(store: Store) -> None:
    session = await open_suzune(store, WorldScript(descriptor="  \n", memory="ok"))
    await talk(session, "Hello.")
    _, result = await end_now(session)
    assert sorted(f.split(": ")[1].split(" (")[0] for f in result.failed) == ["descriptor", "memory"]
    kai = (await store.world.view("suzune")).about(KAI)
    assert kai.descriptor == "" and kai.memory == "" and kai.goal  # the others still ran


async def test_when_the_summary_fails_nothing_else_is_made_up(store: Store) -> None:
    script = WorldScript(summary=ServerFailed("The server failed (502).", ""))
    session = await open_suzune(store, script)
    await talk(session, "Hello.")
    conversation, result = await end_now(session)
    assert script.steps() == ["summary"] and result.failed
    assert (await store.world.view("suzune")).about(KAI).empty()
    script.answers["summary"] = "Kai said hello and Suzune nodded at him from the counter."
    await session.world.sweep()
    assert (await store.world.conversation(conversation.id)).state == "done"
    assert (await store.world.view("suzune")).about(KAI).memory


async def test_nothing_said_since_the_last_end_is_a_clear_error(store: Store) -> None:
    from omoide.errors import CommandError

    session = await open_suzune(store, WorldScript())
    with pytest.raises(CommandError, match="Nothing was said"):
        await session.end_conversation()
    await talk(session, "Hi.")
    await end_now(session)
    with pytest.raises(CommandError, match="Nothing was said"):
        await session.end_conversation()


async def test_an_idle_chat_ends_its_conversation_before_the_next_message(store: Store) -> None:
    from datetime import timedelta

    session = await open_suzune(store, WorldScript(), world_idle_hours=3, world_min_messages=2)
    await talk(session, "One.", "Two.")
    head = (await session.refresh()).head_id
    later = session.world.clock() + timedelta(hours=4)
    session.world.clock = lambda: later
    await talk(session, "Back after a while.")
    await session.world.wait()
    [conversation] = await store.world.conversations(chat_id=session.chat.id)
    assert conversation.reason == "idle" and conversation.end_id == head and conversation.state == "done"
    assert (await store.world.view("suzune")).about(KAI).memory


async def test_the_pass_waits_for_a_reply_and_a_reply_never_waits_for_the_pass(store: Store) -> None:
    """A step in flight when a reply starts is cancelled and asked again after it."""
    release = asyncio.Event()
    script = WorldScript()
    first_summary = [True]

    def summarizer_turn(messages):  # type: ignore[no-untyped-def]
        if first_summary[0] and "Summarize this conversation" in messages[-1]["content"]:
            first_summary[0] = False
            return [release, script.answer(messages)]  # holds until released: never, unless preempted
        return script.default()(messages)

    summarizer = ScriptedBackend(default=summarizer_turn)
    session = await ChatSession.open(store, find_character("suzune"), settings(), ScriptedBackend(), summarizer=summarizer)
    await talk(session, "Hello.")
    await session.end_conversation()
    while not summarizer.calls:
        await asyncio.sleep(0.01)
    await talk(session, "Are you still there?")  # completes although the summary step is stuck
    assert session.gate.preempted == 1
    await session.world.wait()
    assert (await store.world.view("suzune")).about(KAI).memory
    assert not release.is_set()


async def test_a_template_with_an_unknown_placeholder_falls_back_to_the_default(store: Store, omoide_home: Path) -> None:
    from omoide.memory import templates

    folder = omoide_home / "config" / "templates"
    folder.mkdir(parents=True)
    (folder / "world.goal.txt").write_text("What does {char} want from {victim} next time?")
    (folder / "world.descriptor.txt").write_text("Label {other} for {char} in two words. Memory: {memory}")
    problem = templates.get("world.goal").problem
    assert problem is not None and "{victim}" in problem
    script = WorldScript()
    session = await open_suzune(store, script)
    await talk(session, "Hello.")
    conversation, _ = await end_now(session)
    asked = dict(script.asked)
    assert "goal for the next conversation with Kai" in asked["goal"]  # the shipped default
    assert "Label Kai for Suzune in two words." in script.asked[3][1]  # the valid override
    labels = {u.field: u.template for u in await store.world.updates(conversation_id=conversation.id)}
    assert labels[Field.GOAL] == "world.goal (default (override invalid))"
    assert labels[Field.DESCRIPTOR] == "world.descriptor (override)"


async def test_an_answer_that_repeats_the_prompt_is_refused(store: Store) -> None:
    session = await open_suzune(store, WorldScript(summary="The conversation:\nKai: My exam is on Friday."))
    await talk(session, "My exam is on Friday.")
    _, result = await end_now(session)
    assert result.failed and "repeated the prompt" in result.failed[0]
    assert (await store.world.view("suzune")).summaries == []


async def test_in_the_storys_own_words_the_pass_asks_nothing_and_a_new_chat_knows_what_you_said(store: Store) -> None:
    """memory_writer 'extract' (the embedded models' 'auto'): the conversation's
    summary and Suzune's memory of you are your own sentences, told as said."""
    script = WorldScript()
    session = await open_suzune(store, script, memory_writer="extract")
    await talk(session, "My sister Ilse works at the lighthouse in Brekka.", "Black coffee, please.")
    conversation, result = await end_now(session)
    assert result.failed == [] and script.steps() == []  # no model call
    kai = (await store.world.view("suzune")).about(KAI)
    assert kai.memory is not None and "Kai said: Their sister Ilse works at the lighthouse in Brekka." in kai.memory
    log = await store.world.updates(conversation_id=conversation.id)
    assert next(u for u in log if u.field is Field.MEMORY).model == "the story's own words"

    chat = ScriptedBackend()
    fresh = await ChatSession.open(store, find_character("suzune"), settings(memory_writer="extract"), chat, new=True)
    await talk(fresh, "Hello again.")
    assert "Ilse works at the lighthouse in Brekka" in chat.calls[-1]["messages"][0]["content"]



async def test_in_the_storys_own_words_each_line_keeps_the_time_it_was_said(store: Store) -> None:
    """Not the conversation's end: a fact told at 19:03 of an evening that ended at 21:40 is dated 19:03."""
    session = await open_suzune(store, WorldScript(), memory_writer="extract")
    now = [datetime(2026, 3, 2, 19, 3, tzinfo=UTC)]
    session.clock = lambda: now[0]
    await talk(session, "My sister Ilse works at the lighthouse in Brekka.")
    now[0] = datetime(2026, 3, 2, 21, 40, tzinfo=UTC)
    await talk(session, "Black coffee, please.")
    await end_now(session)
    memory = (await store.world.view("suzune")).about(KAI).memory or ""
    said = stamp(datetime(2026, 3, 2, 19, 3, tzinfo=UTC))
    assert f"{said} Kai said: Their sister Ilse works at the lighthouse in Brekka." in memory
    assert stamp(datetime(2026, 3, 2, 21, 40, tzinfo=UTC)) not in memory

LONG_EVENING = [
    "My goldfinch is named Pipkin, and she sings at dawn.",
    *[f"The tram was late again this morning, number {n}, and the rain kept tapping on the café window." for n in range(24)],
]


async def test_what_you_said_early_in_a_long_conversation_reaches_the_summary_step(store: Store) -> None:
    script = WorldScript()
    session = await open_suzune(store, script, world_transcript_chars=1000)
    await talk(session, *LONG_EVENING)
    _, result = await end_now(session)
    assert result.failed == []
    task = next(text for step, text in script.asked if step == "summary")
    assert re.search(r"\[\d\d/\d\d \d\d:\d\d\] Kai: My goldfinch is named Pipkin, and she sings at dawn\.", task)  # dated
    assert "number 23" in task  # and the end, as it was said


async def test_a_new_chat_knows_what_you_said_early_in_a_long_conversation(store: Store) -> None:
    """In the story's own words: the first line of a conversation far longer
    than world_transcript_chars still reaches Suzune's memory of you."""
    session = await open_suzune(store, WorldScript(), memory_writer="extract", world_transcript_chars=1000)
    await talk(session, *LONG_EVENING)
    _, result = await end_now(session)
    assert result.failed == []

    chat = ScriptedBackend()
    fresh = await ChatSession.open(store, find_character("suzune"), settings(memory_writer="extract"), chat, new=True)
    await talk(fresh, "Hello again.")
    assert "goldfinch is named Pipkin" in chat.calls[-1]["messages"][0]["content"]


async def test_a_line_the_summary_quotes_is_said_once_in_the_prompt(store: Store) -> None:
    chat = ScriptedBackend()
    session = await open_suzune(store, WorldScript(), chat)
    await talk(session, "My sister Aoi moved to Leeds.", "She teaches piano.")
    head = await session.head()
    assert head is not None
    await store.memory.add_summary(session.chat.id, head.id, covers_to_id=None, diary_to_id=None,
                                   content="[05/03 19:00] Kai said: My sister Aoi moved to Leeds.")
    await store.world.change("suzune", SELF, Field.GLOBAL, "[05/09 20:00] Kai said: My sister Aoi moved to Leeds. "
                             "Kai hates umbrellas.", step="edit", kind=UpdateKind.EDIT)
    prompt = await session.build_prompt(head.id)
    system = prompt.messages[0]["content"]

    assert system.count("Aoi moved to Leeds") == 1
    assert "## What Suzune carries\n[05/09 20:00] Kai said: Kai hates umbrellas." in system
    assert system.index("Aoi moved to Leeds") > system.index("Recent Conversation Summary")
