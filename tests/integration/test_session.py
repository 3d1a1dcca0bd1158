"""ChatSession end to end on a real SQLite file, with a scripted model."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from omoide.characters.model import Character
from omoide.config.settings import Settings
from omoide.domain.chat import DiaryAuthor, MessageStatus, Role
from omoide.memory.summary import DATE_SPAN
from omoide.errors import CommandError, NotFound, ServerFailed
from omoide.chat.events import DiarySaved, ReplyDelta, ReplyFailed, ReplyFinished
from omoide.memory.events import MemoryNotice, MemoryWorkDone, MemoryWorkFailed
from omoide.llm.base import ToolCall
from omoide.chat.session import ChatSession
from omoide.store import Store
from tests.scripted import ScriptedBackend

MIKA = Character(id="mika", name="Mika", first_message="*waves* Hi, {{user}}!", description="{{char}} keeps a small bakery.")
SUMMARY = "Kai and Mika talked about the bakery. She promised to save him a melon pan, and he seemed pleased by it."


def settings(**kw) -> Settings:
    base = dict(user_name="Kai", context_size=4096, max_tokens=200)
    base.update(kw)
    return Settings(**base)


async def run_turn(session: ChatSession, text: str) -> list:
    return [event async for event in session.send(text)]


async def open_session(store: Store, backend: ScriptedBackend, summarizer: ScriptedBackend | None = None, events: list | None = None, **kw) -> ChatSession:
    return await ChatSession.open(
        store, MIKA, settings(**kw), backend, summarizer=summarizer,
        on_memory_event=(events.append if events is not None else None),
    )


async def test_a_new_chat_starts_with_the_greeting_and_a_turn_is_stored(store: Store) -> None:
    backend = ScriptedBackend([["*smiles* ", "Fresh ", "bread?"]])
    session = await open_session(store, backend)
    events = await run_turn(session, "Morning!")
    assert "".join(e.text for e in events if isinstance(e, ReplyDelta)) == "*smiles* Fresh bread?"
    transcript = await session.transcript()
    assert [(m.role, m.content) for m in transcript] == [
        (Role.ASSISTANT, "*waves* Hi, Kai!"), (Role.USER, "Morning!"), (Role.ASSISTANT, "*smiles* Fresh bread?"),
    ]
    assert transcript[-1].status is MessageStatus.COMPLETE
    prompt = backend.calls[0]["messages"]
    assert prompt[0]["role"] == "system" and "Mika keeps a small bakery." in prompt[0]["content"]
    assert prompt[-2]["content"].endswith("Morning!") and prompt[-1]["role"] == "system"


async def test_reopening_resumes_the_same_chat(store: Store) -> None:
    session = await open_session(store, ScriptedBackend([["Hello again."]]))
    await run_turn(session, "Hi")
    again = await open_session(store, ScriptedBackend())
    assert again.chat.id == session.chat.id
    assert [m.content for m in await again.transcript()][-1] == "Hello again."


async def test_an_imitated_timestamp_never_reaches_the_transcript(store: Store) -> None:
    session = await open_session(store, ScriptedBackend([["[04/02 ", "09:15] ", "*yawns* Morning."]]))
    events = await run_turn(session, "Up early?")
    assert "".join(e.text for e in events if isinstance(e, ReplyDelta)) == "*yawns* Morning."


async def test_inline_save_memory_is_saved_and_hidden(store: Store) -> None:
    backend = ScriptedBackend([["Deal. <save_", "memory>He promised to come ", "back Friday.</save_memory> See you."]])
    session = await open_session(store, backend)
    events = await run_turn(session, "I'll come back Friday, promise.")
    saved = [e.entry for e in events if isinstance(e, DiarySaved)]
    assert [e.content for e in saved] == ["He promised to come back Friday."]
    assert (await session.transcript())[-1].content == "Deal.  See you."
    assert "save_memory" in backend.calls[0]["messages"][0]["content"]
    memory = await session.memory()
    assert [e.content for e in memory.diary] == ["He promised to come back Friday."]


async def test_native_save_memory_tool_call_continues_the_same_reply(store: Store) -> None:
    call = ToolCall(id="call_1", name="save_memory", arguments={"content": "He likes melon pan."}, raw_arguments='{"content": "He likes melon pan."}')
    backend = ScriptedBackend([["Oh? "], call], supports_tools=True)
    backend.turns = [["Oh? ", call], ["Then I'll bake some."]]
    session = await open_session(store, backend)
    events = await run_turn(session, "Melon pan is my favourite.")
    assert [e.entry.content for e in events if isinstance(e, DiarySaved)] == ["He likes melon pan."]
    reply = (await session.transcript())[-1]
    assert reply.content == "Oh? Then I'll bake some."
    assert backend.calls[0]["tools"][0].name == "save_memory"
    second = backend.calls[1]["messages"]
    assert second[-2]["tool_calls"][0]["function"]["name"] == "save_memory"
    assert second[-1] == {"role": "tool", "tool_call_id": "call_1", "content": "Saved to your diary."}


async def test_a_failing_backend_keeps_the_users_message_and_the_chat_usable(store: Store) -> None:
    backend = ScriptedBackend([ServerFailed("The server answered 500.", "Try again later."), ["Sorry, I was out back."]])
    session = await open_session(store, backend)
    events = await run_turn(session, "Hello?")
    failed = [e for e in events if isinstance(e, ReplyFailed)]
    assert failed and failed[0].message is None and "500" in failed[0].error.message
    assert (await session.transcript())[-1].content == "Hello?"
    await run_turn(session, "Anyone there?")
    assert [m.content for m in await session.transcript()][-3:] == ["Hello?", "Anyone there?", "Sorry, I was out back."]


async def test_a_fault_in_a_backends_own_code_is_a_failed_reply_not_a_silent_one(store: Store) -> None:
    """A bug in a backend (here a TypeError) fails the reply the way a server's
    error does: the failure is said, stored with the message, and the chat goes on."""
    backend = ScriptedBackend([TypeError("stream() got an unexpected keyword argument"), ["Back again."]])
    session = await open_session(store, backend)
    events = await run_turn(session, "Hello?")
    failed = next(e for e in events if isinstance(e, ReplyFailed))
    assert "unexpectedly (TypeError)" in failed.error.message and "/regen" in failed.error.hint
    await run_turn(session, "Still there?")
    assert [m.content for m in await session.transcript()][-3:] == ["Hello?", "Still there?", "Back again."]


async def test_a_failure_mid_reply_keeps_what_arrived_as_interrupted(store: Store) -> None:
    backend = ScriptedBackend([["The oven is ", "still warm and ", ServerFailed("dropped", "")]])
    session = await open_session(store, backend)
    events = await run_turn(session, "Still open?")
    failed = next(e for e in events if isinstance(e, ReplyFailed))
    assert failed.message is not None and failed.message.status is MessageStatus.INTERRUPTED
    assert failed.message.content == "The oven is still warm and"


async def test_cancelling_a_reply_keeps_the_partial_text_marked_interrupted(store: Store) -> None:
    hold = asyncio.Event()
    backend = ScriptedBackend([["Let me tell you about ", "the sourdough starter, ", hold, "never sent"]])
    session = await open_session(store, backend)
    seen: list[str] = []

    async def consume() -> None:
        async for event in session.send("Tell me a story"):
            if isinstance(event, ReplyDelta):
                seen.append(event.text)

    task = asyncio.create_task(consume())
    while "".join(seen) != "Let me tell you about the sourdough starter, ":
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    last = (await session.transcript())[-1]
    assert last.status is MessageStatus.INTERRUPTED
    assert last.content == "Let me tell you about the sourdough starter,"


async def chat_turns(session: ChatSession, n: int) -> None:
    for i in range(n):
        await run_turn(session, f"message {i}")


async def test_compression_folds_old_messages_into_the_summary(store: Store) -> None:
    events: list = []
    summarizer = ScriptedBackend([[SUMMARY]])
    session = await open_session(store, ScriptedBackend(default=lambda m: ["ok"]), summarizer, events, recent_messages=3, summary_threshold=4)
    await chat_turns(session, 2)  # greeting + 4 messages: past the threshold of 4
    await session.wait_for_memory_work()
    assert any(isinstance(e, MemoryWorkDone) and e.kind == "summary" for e in events)
    memory = await session.memory()
    assert memory.summary is not None and DATE_SPAN.sub("", memory.summary.content) == SUMMARY  # dated when written
    assert [m.content for m in memory.window] == ["ok", "message 1", "ok"]
    request = summarizer.calls[0]["messages"]
    assert "third person, past tense" in request[0]["content"]
    assert "*waves* Hi, Kai!" in request[1]["content"] and "message 0" in request[1]["content"]
    session.backend.turns = [["fine"]]
    await run_turn(session, "next")
    assert SUMMARY in session.backend.calls[-1]["messages"][0]["content"]


async def test_failed_compression_changes_nothing_and_is_retried_next_turn(store: Store) -> None:
    events: list = []
    summarizer = ScriptedBackend([ServerFailed("The summarizer answered 503.", ""), [SUMMARY]])
    session = await open_session(store, ScriptedBackend(default=lambda m: ["ok"]), summarizer, events, recent_messages=3, summary_threshold=4)
    await chat_turns(session, 2)
    await session.wait_for_memory_work()
    assert isinstance(events[-1], MemoryWorkFailed) and "503" in events[-1].reason
    assert "503" in session.memory_status
    memory = await session.memory()
    assert memory.summary is None and len(memory.window) == 5
    await chat_turns(session, 1)
    await session.wait_for_memory_work()
    assert DATE_SPAN.sub("", (await session.memory()).summary.content) == SUMMARY
    assert session.memory_status == ""


async def test_a_summary_written_badly_is_replaced_by_the_storys_own_sentences(store: Store) -> None:
    """A small model's summary that answers like a chat partner, repeats its
    instructions or keeps none of the names it covers is refused, and the user's
    own sentences with names, numbers and dates are kept instead: nothing falls
    out of memory because the model wrote badly."""
    events: list = []
    bad = ["*giggles* Hi! I'm so happy you came back to see me today!",
           "Sentence Structure Guide: in this paragraph, summarize the conversation so far, keeping every fact.",
           "They talked for a while about many different things and it was a pleasant evening overall."]
    summarizer = ScriptedBackend([[text] for text in bad])
    session = await open_session(store, ScriptedBackend(default=lambda m: ["ok"]), summarizer, events, recent_messages=3, summary_threshold=4)
    await run_turn(session, "My cat is called Biscuit and I live at 42 Harbour Lane.")
    await run_turn(session, "On Sunday I met Dario at the Lisbon aquarium.")
    await session.wait_for_memory_work()
    memory = await session.memory()
    assert memory.summary is not None, [e for e in events]
    assert "Biscuit" in memory.summary.content and "42 Harbour Lane" in memory.summary.content
    assert "giggles" not in memory.summary.content
    assert any(isinstance(e, MemoryNotice) and "kept the sentences" in e.note for e in events)
    for _ in range(4):  # the next compressions: instructions repeated, then no name kept
        await run_turn(session, "We talked about Dario's new job at the observatory in Tromso, and the 7 cats.")
        await session.wait_for_memory_work()
    content = (await session.memory()).summary.content  # type: ignore[union-attr]
    assert "Sentence Structure Guide" not in content and "pleasant evening overall" not in content
    assert "Tromso" in content


async def test_the_reply_never_waits_for_compression(store: Store) -> None:
    release = asyncio.Event()
    summarizer = ScriptedBackend([[release, SUMMARY]])
    session = await open_session(store, ScriptedBackend(default=lambda m: ["ok"]), summarizer, recent_messages=3, summary_threshold=4)
    await chat_turns(session, 2)
    assert session.memory_worker.running
    events = await asyncio.wait_for(run_turn(session, "are you there?"), timeout=5)
    assert any(isinstance(e, ReplyFinished) for e in events)
    assert session.memory_worker.running  # compression is still held
    release.set()
    await session.wait_for_memory_work()
    memory = await session.memory()
    assert memory.summary is not None
    assert [m.content for m in memory.window][-2:] == ["are you there?", "ok"]


async def test_diary_compression_replaces_old_entries_in_the_characters_voice(store: Store) -> None:
    compressed = "I keep a seat for him now. He promised Friday, and I believe him."
    events: list = []
    summarizer = ScriptedBackend([[compressed]])
    session = await open_session(store, ScriptedBackend(default=lambda m: ["ok"]), summarizer, events, diary_compress_lines=3)
    for i in range(4):
        await session.user.remember(f"note {i}")
    await chat_turns(session, 1)
    await session.wait_for_memory_work()
    memory = await session.memory()
    assert [e.content for e in memory.diary] == [compressed]
    assert memory.stable_diary[0].author is DiaryAuthor.COMPRESSION and memory.new_diary == []
    assert "own voice" in summarizer.calls[0]["messages"][0]["content"]


async def test_the_diary_survives_a_restart(tmp_path: Path) -> None:
    store = await Store.open(tmp_path / "d.db")
    session = await open_session(store, ScriptedBackend([["Noted.<save_memory>He hates thunder.</save_memory>"]]))
    await run_turn(session, "I hate thunder.")
    await session.user.remember("He works nights.")
    await store.close()
    store = await Store.open(tmp_path / "d.db")
    again = await open_session(store, ScriptedBackend())
    diary = (await again.memory()).diary
    await store.close()
    assert [(e.content, e.author) for e in diary] == [("He hates thunder.", DiaryAuthor.CHARACTER), ("He works nights.", DiaryAuthor.USER)]


async def test_the_prompt_never_exceeds_the_context_size(store: Store) -> None:
    backend = ScriptedBackend(default=lambda m: ["word " * 60])
    session = await open_session(store, backend, context_size=600, max_tokens=100)
    for i in range(12):
        await run_turn(session, "talk " * 50)
        assert session.last_prompt is not None and session.last_prompt.total_tokens <= 500
    assert session.last_prompt.dropped and "oldest" in session.last_prompt.dropped[0]


async def test_memory_follows_the_branch(store: Store) -> None:
    backend = ScriptedBackend([["Hm."], ["Fine.<save_memory>He confessed. I said yes.</save_memory>"]])
    session = await open_session(store, backend)
    await run_turn(session, "Can I ask you something?")
    await session.tree.save_branch("before_confession")
    with pytest.raises(CommandError, match="already exists"):
        await session.tree.save_branch("before_confession")
    await run_turn(session, "I like you.")
    assert [e.content for e in (await session.memory()).diary] == ["He confessed. I said yes."]

    target, autosaved = await session.tree.restore_branch("before_confession")
    assert autosaved is not None and autosaved.name.startswith("auto-")
    assert (await session.memory()).diary == []
    assert (await session.transcript())[-1].content == "Hm."

    await session.tree.restore_branch(autosaved.name)
    assert [e.content for e in (await session.memory()).diary] == ["He confessed. I said yes."]
    assert (await session.transcript())[-1].content.startswith("Fine.")
    with pytest.raises(NotFound, match="before_confession"):
        await session.tree.restore_branch("nope")
    with pytest.raises(CommandError, match="not a valid branch name"):
        await session.tree.save_branch("../etc")


async def test_compression_begun_on_one_branch_never_lands_in_another(store: Store) -> None:
    release = asyncio.Event()
    summarizer = ScriptedBackend([[release, SUMMARY]])
    session = await open_session(store, ScriptedBackend(default=lambda m: ["ok"]), summarizer, recent_messages=3, summary_threshold=4)
    await run_turn(session, "first")
    await session.tree.save_branch("early")
    await run_turn(session, "second")  # compression starts here, and is held
    assert session.memory_worker.running
    await session.tree.restore_branch("early")
    release.set()
    await session.wait_for_memory_work()
    assert (await session.memory()).summary is None
    await run_turn(session, "a different path")
    assert (await session.memory()).summary is None or SUMMARY not in (await session.memory()).summary.content


async def test_regenerate_adds_a_swipe_and_swipes_can_be_selected(store: Store) -> None:
    session = await open_session(store, ScriptedBackend([["First take."], ["Second take."]]))
    await run_turn(session, "Say something")
    [e async for e in session.regenerate()]
    swipes, index = await session.tree.swipes()
    assert [m.content for m in swipes] == ["First take.", "Second take."] and index == 1
    await session.tree.select_swipe(-1)
    assert (await session.transcript())[-1].content == "First take."


async def test_edit_and_undo_keep_everything_reachable(store: Store) -> None:
    session = await open_session(store, ScriptedBackend([["Reply one."], ["Reply two."]]))
    await run_turn(session, "Typo mesage")
    [e async for e in session.edit_last("Typo-free message")]
    path = [m.content for m in await session.transcript()]
    assert path[-2:] == ["Typo-free message", "Reply two."]
    await session.tree.undo()
    assert [m.content for m in await session.transcript()] == ["*waves* Hi, Kai!"]
    assert await store.messages.count(session.chat.id) == 5


async def test_switching_persona_changes_who_the_character_talks_to_and_is_remembered(store: Store) -> None:
    backend = ScriptedBackend(default=lambda m: ["Hi."])
    cfg = settings(personas={"Captain Rhea": "A sea captain with a scar and a soft spot for cats."})
    session = await ChatSession.open(store, MIKA, cfg, backend)
    with pytest.raises(CommandError, match="no persona named 'Rhea'"):
        await session.user.set_persona("Rhea")
    await session.user.set_persona("captain rhea")
    await run_turn(session, "Ahoy.")
    system = backend.calls[-1]["messages"][0]["content"]
    assert "## Captain Rhea\nA sea captain with a scar" in system
    again = await ChatSession.open(store, MIKA, cfg, backend)
    assert again.user.name == "Captain Rhea"


async def test_lore_fires_on_keywords_and_lands_in_the_volatile_tail(store: Store) -> None:
    from omoide.characters.model import LoreEntry, Lorebook

    book = Lorebook(entries=[
        LoreEntry(keys=["cat"], content="Mochi is a grey stray cat.", name="The cat"),
        LoreEntry(keys=[], content="It always rains on Tuesdays.", constant=True, name="Weather"),
        LoreEntry(keys=["harbor"], content="The harbor froze once.", name="Harbor"),
    ])
    character = Character(id="mika", name="Mika", first_message="Hi.", character_book=book)
    backend = ScriptedBackend(default=lambda m: ["Mm."])
    session = await ChatSession.open(store, character, settings(), backend)
    await run_turn(session, "Is that your cat on the windowsill?")
    system, *_, tail = backend.calls[-1]["messages"]
    assert "It always rains on Tuesdays." in system["content"]
    assert "Mochi is a grey stray cat." in tail["content"] and "Mochi" not in system["content"]
    assert "harbor froze" not in system["content"] + tail["content"]
    assert sorted(session.last_prompt.lore) == ["The cat: key 'cat' in the last message", "Weather: constant"]


async def test_alternate_greetings_are_swipes_of_the_first_message(store: Store) -> None:
    character = Character(id="orin", name="Orin", first_message="Mind the gears, {{user}}.", alternate_greetings=["*winds a music box* Listen."])
    session = await ChatSession.open(store, character, settings(), ScriptedBackend())
    swipes, index = await session.tree.swipes()
    assert [m.content for m in swipes] == ["Mind the gears, Kai.", "*winds a music box* Listen."] and index == 0
    await session.tree.select_swipe(1)
    assert [m.content for m in await session.transcript()] == ["*winds a music box* Listen."]


async def test_an_empty_first_message_opens_with_the_first_alternate_and_keeps_the_others_as_swipes(tmp_path: Path) -> None:
    """A card imported from SillyTavern with only alternate greetings: the chat opens with the first."""
    import json as _json

    from omoide.characters.cards import import_card

    card = {"spec": "chara_card_v2", "spec_version": "2.0", "data": {
        "name": "Orin", "first_mes": "", "alternate_greetings": ["", "Closed! ...Oh, it's you, {{user}}.", "*winds a music box*"],
    }}
    path = tmp_path / "orin.json"
    path.write_text(_json.dumps(card))
    character = import_card(path)
    store = await Store.open(tmp_path / "o.db")
    session = await ChatSession.open(store, character, settings(), ScriptedBackend())
    swipes, index = await session.tree.swipes()
    await store.close()
    assert [m.content for m in swipes] == ["Closed! ...Oh, it's you, Kai.", "*winds a music box*"] and index == 0


async def test_standalone_lorebooks_attached_to_a_character_or_every_chat_fire(store: Store, tmp_path: Path) -> None:
    import json as _json

    from omoide.characters.attached import attach_lorebook
    from omoide.errors import CharacterError

    world = tmp_path / "harbour.json"
    world.write_text(_json.dumps({"entries": {"0": {"uid": 0, "key": ["lighthouse"], "content": "The lighthouse has been dark since 1998.",
                                                    "comment": "Lighthouse", "order": 10, "disable": False}}}))
    everywhere = tmp_path / "weather.json"
    everywhere.write_text(_json.dumps({"entries": {"0": {"uid": 0, "key": [], "content": "It is the rainy season.", "constant": True}}}))
    attach_lorebook(world, MIKA)
    attach_lorebook(everywhere, None)
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    with pytest.raises(CharacterError, match="not valid JSON"):
        attach_lorebook(broken, MIKA)
    backend = ScriptedBackend(default=lambda m: ["Mm."])
    session = await ChatSession.open(store, MIKA, settings(), backend)
    await run_turn(session, "Why is the lighthouse dark?")
    system, *_, tail = backend.calls[-1]["messages"]
    assert "It is the rainy season." in system["content"]
    assert "dark since 1998" in tail["content"]
    assert any("Lighthouse" in line and "lighthouse" in line for line in session.last_prompt.lore)


async def test_lore_left_out_by_the_budget_is_reported_in_the_prompt_and_the_log(store: Store, caplog: pytest.LogCaptureFixture) -> None:
    from omoide.characters.model import LoreEntry, Lorebook
    from omoide.tui.screens.inspector import inspector_text

    book = Lorebook(entries=[  # no token_budget: a share of the context (25% of 1,024 = 256 tokens)
        LoreEntry(keys=[], content="The harbour town of Kesh. " * 20, constant=True, name="Kesh"),
        LoreEntry(keys=["lighthouse"], content="The lighthouse keeper is gone. " * 20, name="Lighthouse", priority=1),
        LoreEntry(keys=["ferry"], content="The ferry runs at dawn.", name="Ferry"),
    ])
    character = Character(id="mika", name="Mika", first_message="Hi!", character_book=book)
    session = await ChatSession.open(store, character, settings(context_size=1024, max_tokens=100), ScriptedBackend())
    caplog.set_level("WARNING")
    await run_turn(session, "Is the lighthouse lit? And the ferry?")
    prompt = session.last_prompt
    assert prompt is not None
    system = prompt.messages[0]["content"]
    assert "The harbour town of Kesh." in system  # the constant entry stays
    assert "The ferry runs at dawn." in prompt.messages[-1]["content"]
    assert "lighthouse keeper" not in "".join(m["content"] for m in prompt.messages)
    assert "Lighthouse skipped: over the token budget (256)" in prompt.lore
    assert "Lighthouse skipped: over the token budget (256)" in inspector_text(prompt)
    assert "lore entry 'Lighthouse' skipped: over the token budget (256)" in caplog.text


async def test_a_rewrite_written_badly_keeps_the_summary_it_was_to_fold_in(store: Store) -> None:
    """With summary_merge_chars = 0 every compression rewrites the whole summary;
    when a rewrite is refused, the story's own words are added to the summary
    there was, never put in its place."""
    first = "Kai and Mika talked about his cat Biscuit-1001, who sleeps on the radiator, and she listened."
    summarizer = ScriptedBackend([[first], ["*giggles* Hi! I'm so happy you came back to see me today!"]])
    session = await open_session(store, ScriptedBackend(default=lambda m: ["ok"]), summarizer, [], recent_messages=3,
                                 summary_threshold=4, summary_merge_chars=0)
    await run_turn(session, "My cat is called Biscuit-1001.")
    await run_turn(session, "He sleeps on the radiator.")
    await session.wait_for_memory_work()
    assert "Biscuit-1001" in (await session.memory()).summary.content  # type: ignore[union-attr]
    for text in ("On Sunday I met Dario at the Lisbon aquarium.", "Dario says hello.", "The weather turned."):
        await run_turn(session, text)
        await session.wait_for_memory_work()
    content = (await session.memory()).summary.content  # type: ignore[union-attr]
    assert "Biscuit-1001" in content and "Lisbon" in content and "giggles" not in content


async def test_a_summary_the_model_spoils_again_and_again_stays_bounded_and_keeps_the_first_fact(store: Store) -> None:
    """Every rewrite refused: the summary it was to fold in and the new words are
    chosen from together, within a bound, so the summary no longer grows with
    the story, and a lasting fact said first outweighs the day's passing detail."""
    spoiled = "*giggles* Hi! I'm so happy you came back to see me today!"
    summarizer = ScriptedBackend(default=lambda m: [spoiled])
    session = await open_session(store, ScriptedBackend(default=lambda m: ["ok"]), summarizer, [], recent_messages=3,
                                 summary_threshold=4, summary_merge_chars=600)
    await run_turn(session, "My cat is called Biscuit-1001.")
    sizes = []
    for day in range(30):
        await run_turn(session, f"The {day % 12 + 1}:15 train from Hollow Bay to Carrow Point was late again, day {day}.")
        await session.wait_for_memory_work()
        sizes.append(len((await session.memory()).summary.content))  # type: ignore[union-attr]
    content = (await session.memory()).summary.content  # type: ignore[union-attr]
    assert "Biscuit-1001" in content and "giggles" not in content
    assert max(sizes[10:]) < 600 + 900 + 100, sizes  # a rewrite's bound, and one part appended after it


async def test_no_automatic_branch_is_added_where_a_branch_is_already_saved(store: Store) -> None:
    """Issue 42: every undo, edit, delete, regenerate and restore added an automatic
    branch, even when it left a point already saved; the list filled with copies."""
    session = await open_session(store, ScriptedBackend(default=lambda m: ["Mm."]))
    await run_turn(session, "one")
    await run_turn(session, "two")
    await session.tree.save_branch("mine")  # the head: two's reply

    async def saved() -> list[str]:
        return sorted(b.name for b in await session.tree.branches())

    _, kept = await session.tree.undo()  # leaves "mine": it keeps that point already
    assert kept.name == "mine" and await saved() == ["mine"]
    _, left = await session.tree.restore_branch("mine")  # the point after the undo was not saved: it is now
    assert left is not None and left.name.startswith("auto-")
    assert await saved() == sorted(["mine", left.name])
    _, again = await session.tree.restore_branch(left.name)  # back and forth: nothing new
    assert again is not None and again.name == "mine"
    _, again = await session.tree.restore_branch("mine")
    assert again is not None and again.name == left.name
    assert await saved() == sorted(["mine", left.name])

    path = await session.transcript()
    two = next(m for m in path if m.role is Role.USER and m.content == "two")
    _, kept_on = await session.tree.rewrite(two.id, "two, again")  # edit: the rest is "mine" already
    assert kept_on is not None and kept_on.name == "mine" and await saved() == sorted(["mine", left.name])
    await session.tree.restore_branch("mine")  # the edited message was saved nowhere: one more
    assert len(await saved()) == 3
    reply = (await session.transcript())[-1]
    _, kept_on = await session.tree.delete(reply.id)  # delete: the rest is "mine" already
    assert kept_on is not None and kept_on.name == "mine" and len(await saved()) == 3
    await session.tree.restore_branch("mine")  # "two" without its reply was saved nowhere: one more
    assert len(await saved()) == 4
    async for _ in session.regenerate_from(two.id):  # regenerate: the rest is "mine" already
        pass
    assert len(await saved()) == 4
