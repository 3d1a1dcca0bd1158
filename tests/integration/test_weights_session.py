"""Profile, weights, mentions, recall and amnesia through ChatSession, on a real
SQLite file, with the scripted model."""

from __future__ import annotations

from pathlib import Path

import pytest

from omoide.characters.model import Character
from omoide.config.settings import Settings
from omoide.domain.chat import DiaryAuthor, FactStatus
from omoide.errors import CommandError
from omoide.chat.events import DiarySaved, MemoryRecalled, ProfileLearned, ReplyDelta
from omoide.llm.base import ToolCall
from omoide.world.profile import ProfileBook
from omoide.chat.session import ChatSession
from omoide.store import Store
from tests.scripted import ScriptedBackend

MIKA = Character(id="mika", name="Mika", first_message="*waves* Hi!", description="{{char}} keeps a small bakery.")
WREN = Character(id="wren", name="Wren", first_message="Ahoy.", description="{{char}} draws sea charts.")


def settings(**kw: object) -> Settings:
    return Settings(**{"user_name": "Kai", "context_size": 4096, "max_tokens": 200, **kw})  # type: ignore[arg-type]


async def turn(session: ChatSession, text: str) -> list:
    return [e async for e in session.send(text)]


def system_prompt(backend: ScriptedBackend, call: int = -1) -> str:
    return backend.calls[call]["messages"][0]["content"]


def tail(backend: ScriptedBackend, call: int = -1) -> str:
    return backend.calls[call]["messages"][-1]["content"]


async def test_the_profile_reaches_the_prompts_of_two_different_characters(store: Store) -> None:
    book = ProfileBook(store)
    await book.save_text("name: Kai\naddress: Captain\npronouns: he/him\n- allergic to cats\n")
    mika_backend, wren_backend = ScriptedBackend(), ScriptedBackend()
    mika = await ChatSession.open(store, MIKA, settings(), mika_backend)
    wren = await ChatSession.open(store, WREN, settings(), wren_backend)
    await turn(mika, "Hi")
    await turn(wren, "Hi")
    for backend in (mika_backend, wren_backend):
        system = system_prompt(backend)
        assert "Call them: Captain" in system and "- allergic to cats" in system and "Pronouns: he/him" in system
        assert "allergic to cats" not in tail(backend), "the profile is in the stable part, not the volatile tail"


async def test_a_fact_one_character_learns_reaches_the_other_once_accepted(store: Store) -> None:
    mika_backend = ScriptedBackend([['Oh no! <save_memory about_user="true" importance="4">Kai works night shifts.</save_memory>Coffee?']])
    mika = await ChatSession.open(store, MIKA, settings(), mika_backend)
    events = await turn(mika, "I work night shifts, so I'm always tired.")
    learned = [e for e in events if isinstance(e, ProfileLearned)]
    assert len(learned) == 1 and not learned[0].accepted
    fact = learned[0].fact
    assert (fact.source, fact.chat_id, fact.status) == ("mika", mika.chat.id, FactStatus.PROPOSED)
    assert fact.message_id == (await mika.head()).id  # type: ignore[union-attr]
    [saved] = [e.entry for e in events if isinstance(e, DiarySaved)]
    assert (saved.importance, saved.content) == (4, "Kai works night shifts.")

    wren_backend = ScriptedBackend()
    wren = await ChatSession.open(store, WREN, settings(), wren_backend)
    await turn(wren, "Hi")
    assert "night shifts" not in system_prompt(wren_backend), "a proposal is not in any prompt until accepted"
    await wren.profile.decide(fact.id, accept=True)
    await turn(wren, "Still there?")
    assert "- Kai works night shifts." in system_prompt(wren_backend)
    with pytest.raises(CommandError, match="not waiting"):
        await wren.profile.decide(fact.id, accept=False)


@pytest.mark.parametrize(("learning", "in_profile", "proposals"), [("auto", 1, 0), ("off", 0, 0)])
async def test_profile_learning_auto_adds_at_once_and_off_ignores(store: Store, learning: str, in_profile: int, proposals: int) -> None:
    call = ToolCall("c1", "save_memory", {"content": "Kai is allergic to cats.", "about_user": True}, "")
    backend = ScriptedBackend([[call], ["Noted."]], supports_tools=True)
    session = await ChatSession.open(store, MIKA, settings(tools="native", profile_learning=learning), backend)
    events = await turn(session, "I'm allergic to cats.")
    profile = await session.profile.get()
    assert (len(profile.facts), len(profile.proposals)) == (in_profile, proposals)
    assert [e.accepted for e in events if isinstance(e, ProfileLearned)] == ([True] if learning == "auto" else [])
    assert [e.entry.content for e in events if isinstance(e, DiarySaved)] == ["Kai is allergic to cats."], "the diary keeps it either way"


async def test_entries_get_their_importance_or_the_default(store: Store) -> None:
    call = ToolCall("c1", "save_memory", {"content": "He proposed at the pier.", "importance": 5, "emotion": "joy"}, "")
    backend = ScriptedBackend([[call], ["Yes!"], ["ok <save_memory>He had toast.</save_memory>"]], supports_tools=True)
    session = await ChatSession.open(store, MIKA, settings(tools="native"), backend)
    await turn(session, "Will you marry me?")
    await turn(session, "Toast?")
    important = await session.user.remember("He hates thunder.", importance=5)
    plain = await session.user.remember("He likes rain.")
    diary = (await session.memory()).diary
    assert [(e.content, e.importance, e.emotion) for e in diary] == [
        ("He proposed at the pier.", 5, "joy"), ("He had toast.", 3, None), ("He hates thunder.", 5, None), ("He likes rain.", 3, None),
    ]
    assert important.author is DiaryAuthor.USER and plain.importance == 3
    assert backend.calls[0]["tools"][0].parameters["properties"]["importance"]["maximum"] == 5


async def test_bringing_a_memory_up_again_is_recorded_on_the_branch_and_raises_its_strength(store: Store) -> None:
    backend = ScriptedBackend([["<save_memory>Kai told me about the lighthouse on the northern cape.</save_memory>Wow."], ["Sure."], ["Hm."]])
    session = await ChatSession.open(store, MIKA, settings(), backend)
    await turn(session, "My grandmother kept a lighthouse.")
    [entry] = (await session.memory()).diary
    await session.tree.save_branch("before")
    await turn(session, "Remember that lighthouse on the cape?")
    head = (await session.head()).id  # type: ignore[union-attr]
    mentions = await store.mentions.at(head)
    assert [(m.kind, m.memory_id) for m in mentions] == [("diary", entry.id)]
    assert session.last_prompt is not None
    [(_, shown, power)] = session.last_prompt.memories
    assert shown == f"diary: {entry.content}" and power is not None and power > 3.9, "importance 3 plus a fresh mention"
    await session.tree.restore_branch("before")
    assert await store.mentions.at((await session.head()).id) == []  # type: ignore[union-attr]
    await session.tree.restore_branch(next(b.name for b in await session.tree.branches() if b.name.startswith("auto-")))
    [e async for e in session.regenerate()]
    regenerated = (await session.head()).id  # type: ignore[union-attr]
    assert regenerated != head and len(await store.mentions.at(regenerated)) == 1, "a regenerated reply does not count it twice"


async def test_a_weighted_diary_prompt_picks_the_important_entries(store: Store) -> None:
    backend = ScriptedBackend()
    session = await ChatSession.open(store, MIKA, settings(diary_selection="weighted", diary_prompt_lines=4), backend)
    await turn(session, "Hi")
    await session.user.remember("He cried on the pier.", importance=5)
    for i in range(4):
        await session.user.remember(f"Ordinary day {i}.", importance=1)
    await turn(session, "Hello again")
    shown = tail(backend)
    assert "He cried on the pier." in shown and "Ordinary day 3." in shown and "Ordinary day 0." not in shown
    assert shown.index("He cried on the pier.") < shown.index("Ordinary day 3."), "still in date order"
    default = ScriptedBackend()
    recent = await ChatSession.open(store, MIKA, settings(diary_prompt_lines=4), default, chat_id=session.chat.id)
    await turn(recent, "And now?")
    assert "He cried on the pier." not in tail(default), "the default stays the last lines"


async def test_diary_compression_keeps_important_entries_word_for_word(store: Store) -> None:
    summarizer = ScriptedBackend([["I keep a seat for him now; the days blur together but I smile."]])
    session = await ChatSession.open(store, MIKA, settings(diary_compress_lines=4), ScriptedBackend(default=lambda m: ["ok"]), summarizer=summarizer)
    await turn(session, "Hi")
    kept = await session.user.remember("He said my name like a promise at the pier.", importance=5)
    for i in range(4):
        await session.user.remember(f"Ordinary day {i}.")
    await turn(session, "Again")
    await session.wait_for_memory_work()
    diary = (await session.memory()).diary
    assert [e.author for e in diary] == [DiaryAuthor.COMPRESSION, DiaryAuthor.USER]
    assert (diary[1].content, diary[1].importance, diary[1].origin_id, diary[1].created_at) == (kept.content, 5, kept.id, kept.created_at)
    sent = summarizer.calls[0]["messages"][-1]["content"]
    assert "Ordinary day 3." in sent and "pier" not in sent


async def test_the_native_recall_tool_round_trip(store: Store) -> None:
    seed = ScriptedBackend(default=lambda m: ["Mm."])
    session = await ChatSession.open(store, MIKA, settings(recent_messages=2, summary_threshold=100), seed)
    await turn(session, "The lighthouse keeper gave me a brass key once.")
    for i in range(6):
        await turn(session, f"small talk {i}")
    call = ToolCall("r1", "recall", {"query": "brass key"}, '{"query": "brass key"}')
    backend = ScriptedBackend([["Hmm… ", call], ["The brass key! You still have it?"]], supports_tools=True)
    native = await ChatSession.open(store, MIKA, settings(tools="native", recall_tool=True, recent_messages=2), backend, chat_id=session.chat.id)
    events = await turn(native, "What did the keeper give me?")
    assert "".join(e.text for e in events if isinstance(e, ReplyDelta)) == "Hmm… The brass key! You still have it?"
    [recalled] = [e for e in events if isinstance(e, MemoryRecalled)]
    assert recalled.query == "brass key" and "Kai: The lighthouse keeper gave me a brass key once." in recalled.lines[0]
    assert [t.name for t in backend.calls[0]["tools"]] == ["save_memory", "recall"]
    result = backend.calls[1]["messages"][-1]
    assert result["role"] == "tool" and result["tool_call_id"] == "r1" and "brass key" in result["content"]
    assert native.last_prompt is not None and "brass key" in native.last_prompt.recalled[0]
    assert "call the recall tool" in system_prompt(backend, 0)


async def test_the_inline_recall_round_trip_stops_the_round_and_continues(store: Store) -> None:
    seed = ScriptedBackend(default=lambda m: ["Mm."])
    session = await ChatSession.open(store, MIKA, settings(recent_messages=2, summary_threshold=100), seed)
    await turn(session, "We watched the comet from the old water tower.")
    for i in range(6):
        await turn(session, f"small talk {i}")
    backend = ScriptedBackend([["Wait… <rec", "all>comet tower</recall> and this is never read"], ["Yes, the comet! From the tower."]])
    inline = await ChatSession.open(store, MIKA, settings(recall_tool=True, recent_messages=2), backend, chat_id=session.chat.id)
    events = await turn(inline, "Remember what we watched?")
    assert "".join(e.text for e in events if isinstance(e, ReplyDelta)) == "Wait… Yes, the comet! From the tower."
    second = backend.calls[1]["messages"]
    assert second[-2] == {"role": "assistant", "content": "Wait… <recall>comet tower</recall>"}
    assert second[-1]["role"] == "system" and "We watched the comet from the old water tower." in second[-1]["content"]
    assert "<recall>" in system_prompt(backend, 0)
    assert (await inline.transcript())[-1].content == "Wait… Yes, the comet! From the tower."


async def test_recall_is_off_by_default_and_recall_tags_stay_text(store: Store) -> None:
    backend = ScriptedBackend([["<recall>x</recall> hi"]], supports_tools=True)
    session = await ChatSession.open(store, MIKA, settings(tools="native"), backend)
    events = await turn(session, "hello")
    assert [t.name for t in backend.calls[0]["tools"]] == ["save_memory"]
    assert not [e for e in events if isinstance(e, MemoryRecalled)] and len(backend.calls) == 1


async def test_slash_recall_brings_a_moment_into_the_next_prompt_only(store: Store) -> None:
    backend = ScriptedBackend(default=lambda m: ["Mm."])
    session = await ChatSession.open(store, MIKA, settings(recent_messages=2, summary_threshold=100), backend)
    await turn(session, "The festival lanterns were red and gold.")
    for i in range(4):
        await turn(session, f"small talk {i}")
    found = await session.user.recall("festival lanterns")
    assert len(found) == 1 and found[0].who == "Kai"
    await turn(session, "Do you remember?")
    assert "## A past moment comes back to you" in tail(backend) and "lanterns were red and gold" in tail(backend)
    assert session.last_prompt is not None and session.last_prompt.recalled
    await turn(session, "And now?")
    assert "lanterns" not in tail(backend)
    assert await session.user.recall("submarine") == []
    with pytest.raises(CommandError, match="needs words"):
        await session.user.recall("  ")


async def test_amnesia_hides_tiers_without_deleting_and_off_brings_them_back(store: Store, tmp_path: Path) -> None:
    await ProfileBook(store).add("allergic to cats")
    backend = ScriptedBackend(default=lambda m: ["Mm."])
    session = await ChatSession.open(store, MIKA, settings(), backend)
    await turn(session, "Hi")
    await session.user.remember("He fixed my oven.")
    assert await session.user.set_amnesia(["diary", "profile"]) == ("diary", "profile")
    await turn(session, "Who am I?")
    everything = system_prompt(backend) + tail(backend)
    assert "oven" not in everything and "cats" not in everything
    assert session.last_prompt is not None and session.last_prompt.memories == []
    again = await ChatSession.open(store, MIKA, settings(), backend, chat_id=session.chat.id)
    assert again.chat.amnesia == ("diary", "profile"), "it lasts for this chat"
    other = await ChatSession.open(store, WREN, settings(), ScriptedBackend())
    assert other.chat.amnesia == ()
    with pytest.raises(CommandError, match="not a memory tier"):
        await again.user.set_amnesia(["feelings"])
    assert await again.user.set_amnesia([]) == ()
    await turn(again, "And now?")
    assert "oven" in tail(backend) and "cats" in system_prompt(backend)
    assert [e.content for e in (await again.memory()).diary] == ["He fixed my oven."]


async def test_memos_have_strengths_raised_by_mentions_and_amnesia_hides_them(store: Store) -> None:
    backend = ScriptedBackend(default=lambda m: ["Mm."])
    session = await ChatSession.open(store, MIKA, settings(memory_style="both"), backend)
    await turn(session, "Hi")
    memo = await session.book.write("Kai showed Mika the brass telescope from the harbour.")
    await turn(session, "Shall we take the brass telescope out tonight?")
    head = (await session.head()).id  # type: ignore[union-attr]
    assert [(m.kind, m.memory_id) for m in await store.mentions.at(head)] == [("memo", memo.id)]
    assert session.last_prompt is not None
    [(_, label, power)] = [m for m in session.last_prompt.memories if m[1].startswith("memo: ")]
    assert "brass telescope" in label and power is not None and power > 3.9, "the default importance plus a fresh mention"
    assert await session.user.set_amnesia(["memos"]) == ("memos",)
    await turn(session, "And now?")
    everything = "".join(str(m.get("content")) for m in backend.calls[-1]["messages"])
    assert "brass telescope" not in everything.split("[")[0] and "## Memo" not in everything
    assert session.last_prompt.memories == []
    assert [m.id for m in await session.book.pages()] == [memo.id], "nothing was deleted"
