"""Actions on any message of the path (edit, delete, regenerate, branch from it),
through the session alone, as `omoide say` and the TUI use them: a real SQLite
file, a scripted model."""

from __future__ import annotations

import pytest

from omoide.characters.model import Character
from omoide.chat.events import MessageRewritten, PathKept, ReplyFinished, UserMessageStored
from omoide.chat.session import ChatSession
from omoide.config.settings import Settings
from omoide.domain.chat import Role
from omoide.errors import CommandError
from omoide.store import Store
from tests.scripted import ScriptedBackend

MIKA = Character(id="mika", name="Mika", first_message="*waves* Hi, {{user}}!")


async def story(store: Store, replies: list[list[str]]) -> ChatSession:
    """Greeting, then two exchanges: 'one' -> 'A', 'two' -> 'B'; `replies` follow."""
    session = await ChatSession.open(store, MIKA, Settings(user_name="Kai", max_tokens=200),
                                     ScriptedBackend([["A"], ["B"], *replies]))
    for text in ("one", "two"):
        [e async for e in session.send(text)]
    return session


async def contents(session: ChatSession) -> list[str]:
    return [m.content for m in await session.transcript()]


async def test_editing_an_earlier_reply_makes_a_new_path_and_keeps_the_old_one(store: Store) -> None:
    session = await story(store, [])
    path = await session.transcript()
    events = [e async for e in session.edit_message(path[2].id, "A, but kinder")]
    assert await contents(session) == ["*waves* Hi, Kai!", "one", "A, but kinder"]
    kept = next(e.branch for e in events if isinstance(e, PathKept))
    assert any(isinstance(e, MessageRewritten) for e in events)
    await session.tree.restore_branch(kept)
    assert await contents(session) == ["*waves* Hi, Kai!", "one", "A", "two", "B"]
    old = await store.messages.get(path[2].id)
    assert old.content == "A" and len(await store.messages.siblings(old)) == 2


async def test_editing_an_earlier_message_of_yours_answers_it(store: Store) -> None:
    session = await story(store, [["A again"]])
    path = await session.transcript()
    events = [e async for e in session.edit_message(path[1].id, "uno")]
    assert [type(e) for e in events if isinstance(e, UserMessageStored | ReplyFinished)] == [UserMessageStored, ReplyFinished]
    assert await contents(session) == ["*waves* Hi, Kai!", "uno", "A again"]


async def test_deleting_a_message_moves_the_head_to_its_parent_and_keeps_the_rest(store: Store) -> None:
    session = await story(store, [])
    path = await session.transcript()
    head, kept = await session.tree.delete(path[3].id)
    assert head.id == path[2].id and kept is not None
    assert await contents(session) == ["*waves* Hi, Kai!", "one", "A"]
    assert (await store.messages.get(path[4].id)).content == "B"  # still in the tree
    await session.tree.restore_branch(kept.name)
    assert await contents(session) == ["*waves* Hi, Kai!", "one", "A", "two", "B"]


async def test_the_greeting_cannot_be_deleted(store: Store) -> None:
    session = await story(store, [])
    with pytest.raises(CommandError, match="first message"):
        await session.tree.delete((await session.transcript())[0].id)


async def test_regenerating_an_earlier_reply_adds_a_swipe_on_a_new_path(store: Store) -> None:
    session = await story(store, [["A2"]])
    path = await session.transcript()
    events = [e async for e in session.regenerate_from(path[2].id)]
    assert any(isinstance(e, PathKept) for e in events)
    assert await contents(session) == ["*waves* Hi, Kai!", "one", "A2"]
    swipes, index = await session.tree.swipes()
    assert [m.content for m in swipes] == ["A", "A2"] and index == 1


async def test_regenerating_from_your_message_answers_it_anew(store: Store) -> None:
    session = await story(store, [["A3"]])
    path = await session.transcript()
    [e async for e in session.regenerate_from(path[1].id)]
    assert await contents(session) == ["*waves* Hi, Kai!", "one", "A3"]


async def test_a_branch_from_an_earlier_message_rewinds_memory_to_it(store: Store) -> None:
    session = await story(store, [])
    path = await session.transcript()
    await session.user.remember("Kai said two")  # at the head ('B')
    assert [e.content for e in (await session.memory()).new_diary] == ["Kai said two"]
    branch, saved = await session.tree.branch_from(path[2].id, "before-two")
    assert branch.message_id == path[2].id and saved is not None and saved.message_id == path[4].id
    assert await contents(session) == ["*waves* Hi, Kai!", "one", "A"]
    assert (await session.memory()).new_diary == []  # the diary line was written after this point
    assert {b.name for b in await session.tree.branches()} == {"before-two", saved.name}


async def test_a_message_off_the_path_is_refused(store: Store) -> None:
    session = await story(store, [])
    path = await session.transcript()
    await session.tree.delete(path[3].id)
    with pytest.raises(CommandError, match="not on this path"):
        await session.tree.delete(path[4].id)


async def test_two_deletes_in_the_same_second_keep_both_paths(store: Store) -> None:
    session = await story(store, [])
    path = await session.transcript()
    _, first = await session.tree.delete(path[4].id)
    _, second = await session.tree.delete(path[2].id)
    assert first is not None and second is not None
    kept = sorted(b.message_id for b in await session.tree.branches())
    assert kept == [path[3].id, path[4].id]  # neither overwrote the other
