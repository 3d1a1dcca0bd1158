"""The profile follows the path: a fact a character learned on a path the chat
left is in no prompt and no memory work of the path restored, and comes back
with its path. Real SQLite, a real session; one scripted backend is the chat
model and the summarizer (memory work continues the chat's prompt), and its
memory work copies every marker word of its request, so a fact that reaches
memory work would be written into the summary."""

from __future__ import annotations

from omoide.characters.model import Character
from omoide.chat.session import ChatSession
from omoide.config.settings import Settings
from omoide.domain.chat import Role
from omoide.llm.base import is_memory_task
from omoide.store import Store
from omoide.world.profile import ProfileBook
from tests.integration.test_memory_rot import MIKA, Faithful, say, text_of
from tests.scripted import ScriptedBackend

FACT = "Kai keeps a ferret named ZEPHYRINE."


def system_of(session: ChatSession) -> str:
    assert session.last_prompt is not None
    return str(session.last_prompt.messages[0]["content"])


async def test_a_fact_learned_on_a_left_branch_is_in_no_prompt_or_memory_work_of_the_restored_path(store: Store) -> None:
    script = Faithful()
    backend = ScriptedBackend(default=script)
    session = await ChatSession.open(store, MIKA, Settings(user_name="Kai", profile_learning="auto", recent_messages=4,
                                                           summary_threshold=4, memory_style="both", memo_batch=4,
                                                           memo_recent_messages=4), backend)
    await say(session, "Hello.")
    await session.tree.save_branch("before")
    script.next_reply = f'Oh! <save_memory about_user="true">{FACT}</save_memory>What a pet.'
    await say(session, "Guess what lives with me.")
    await say(session, "Anyway.")
    assert "ZEPHYRINE" in system_of(session)  # learned, and told on this path

    _, left = await session.tree.restore_branch("before")
    since = len(backend.calls)
    for i in range(6):
        await say(session, f"Small talk {i}.")
    later = backend.calls[since:]
    assert any(is_memory_task(call["messages"][-1]) for call in later), "memory work ran on the restored path"
    assert not [call for call in later if "ZEPHYRINE" in text_of(call["messages"])]
    memory = await session.memory()
    assert memory.summary is not None and "ZEPHYRINE" not in memory.summary.content
    assert not any("ZEPHYRINE" in " ".join(m.highlights) for m in memory.memos)

    # Still in the profile, known to be on a path this chat left; back with its path.
    book = ProfileBook(store)
    facts = (await book.get()).facts
    assert [f.content for f in facts] == [FACT]
    assert await book.left_behind(facts) == {facts[0].id}
    assert left is not None
    await session.tree.restore_branch(left.name)
    await say(session, "I'm back.")
    assert "ZEPHYRINE" in system_of(session)
    assert await book.left_behind(facts) == set()


async def test_a_fact_you_wrote_is_in_every_path(store: Store) -> None:
    backend = ScriptedBackend(default=Faithful())
    session = await ChatSession.open(store, MIKA, Settings(user_name="Kai"), backend)
    await say(session, "Hello.")
    await session.tree.save_branch("before")
    await say(session, "More.")
    await session.profile.add("Kai plays the OCARINA.")
    await session.tree.restore_branch("before")
    await say(session, "Again.")
    assert "OCARINA" in system_of(session)


async def test_another_chat_is_not_told_a_fact_from_a_path_its_own_chat_left(store: Store) -> None:
    script = Faithful()
    session = await ChatSession.open(store, MIKA, Settings(user_name="Kai", profile_learning="auto"), ScriptedBackend(default=script))
    await say(session, "Hello.")
    await session.tree.save_branch("before")
    script.next_reply = f'Oh! <save_memory about_user="true">{FACT}</save_memory>What a pet.'
    await say(session, "Guess what lives with me.")

    wren = Character(id="wren", name="Wren", first_message="Evening.")
    other = await ChatSession.open(store, wren, Settings(user_name="Kai"), ScriptedBackend(default=Faithful()))
    await say(other, "Hi, Wren.")
    assert "ZEPHYRINE" in system_of(other)  # in force while its message is on Mika's chat's path
    await session.tree.restore_branch("before")
    await say(other, "Still there?")
    assert "ZEPHYRINE" not in system_of(other)


async def test_whether_a_fact_is_on_the_path_follows_every_move_of_the_head(store: Store) -> None:
    """The book remembers its last answer per fact and carries it down the path:
    it must still see a fact come back when the head returns below it, and leave
    when the head moves to a sibling branch."""
    chat = await store.chats.create("mika", greeting="Hi")
    assert chat.head_id is not None
    before = await store.messages.add(chat.id, chat.head_id, Role.USER, "Hello.")
    learned = await store.messages.add(chat.id, before.id, Role.ASSISTANT, "A ferret!")
    after = await store.messages.add(chat.id, learned.id, Role.USER, "Yes.")
    other = await store.messages.add(chat.id, before.id, Role.ASSISTANT, "Good evening.")
    fact = await store.profile.add_fact(FACT, source="mika", chat_id=chat.id, message_id=learned.id)
    book = ProfileBook(store)
    moves = [(after.id, set()), (before.id, {fact.id}), (after.id, set()), (other.id, {fact.id}),
             (learned.id, set()), (other.id, {fact.id})]
    for head, left in moves:
        assert await book.left_behind([fact], heads={chat.id: head}) == left, head
