"""World memory and branches: an update is in force while the end of the
conversation that caused it is on its chat's path."""

from __future__ import annotations

import pytest

from omoide.store import Store
from omoide.domain.world import Field, UpdateKind, user_key
from tests.world.test_world_pass import end_now, open_suzune, talk
from tests.world_script import WorldScript

KAI = user_key("Kai")


async def test_restoring_before_an_end_retracts_its_updates_and_coming_back_reinstates_them(store: Store) -> None:
    session = await open_suzune(store, WorldScript())
    await talk(session, "Hi.")
    await session.tree.save_branch("before")
    await talk(session, "My exam is on Friday.")
    conversation, _ = await end_now(session)
    applied = await store.world.updates(conversation_id=conversation.id)
    assert (await store.world.view("suzune")).about(KAI).memory

    _, autosave = await session.tree.restore_branch("before")
    view = await store.world.view("suzune")
    assert view.about(KAI).memory == "" and view.about(KAI).familiarity == 0
    assert view.summaries == [] and view.global_memory == "" and view.about(KAI).pair_summaries == []
    assert not (await store.world.conversation(conversation.id)).in_force
    log = await store.world.updates(conversation_id=conversation.id)
    assert log[: len(applied)] == applied  # nothing lost from the log
    assert {u.kind for u in log[len(applied):]} == {UpdateKind.RETRACT}

    # The next prompt no longer carries it.
    await talk(session, "Hello again.")
    assert "regular customer" not in session.last_prompt.messages[0]["content"]  # type: ignore[union-attr]

    assert autosave is not None
    await session.tree.restore_branch(autosave.name)
    view = await store.world.view("suzune")
    assert view.about(KAI).memory == WorldScript().answers["memory"]
    assert view.about(KAI).familiarity == pytest.approx(0.15)
    assert [i.conversation_id for i in view.summaries] == [conversation.id]
    assert (await store.world.conversation(conversation.id)).in_force
    assert len(await store.world.versions("suzune", KAI, Field.MEMORY)) == 3  # made, retracted, reinstated


async def test_a_field_changed_since_is_kept_and_the_choice_is_logged(store: Store) -> None:
    session = await open_suzune(store, WorldScript())
    await talk(session, "Hi.")
    await session.tree.save_branch("before")
    await talk(session, "My exam is on Friday.")
    conversation, _ = await end_now(session)
    from omoide.world import edits

    await edits.edit(store, "suzune", KAI, Field.MEMORY, "Kai owes me 300 yen.")
    await session.tree.restore_branch("before")
    assert (await store.world.view("suzune")).about(KAI).memory == "Kai owes me 300 yen."
    kept = [u for u in await store.world.updates(conversation_id=conversation.id) if u.kind is UpdateKind.KEPT]
    assert [u.field for u in kept] == [Field.MEMORY] and "changed since" in (kept[0].error or "")


async def test_undo_past_an_end_retracts_too_and_a_new_end_is_its_own_conversation(store: Store) -> None:
    session = await open_suzune(store, WorldScript(summary=lambda text: f"They talked; the last line was {text.splitlines()[-8]!r}."))
    await talk(session, "First.")
    first, _ = await end_now(session)
    await session.tree.undo()
    assert not (await store.world.conversation(first.id)).in_force
    await talk(session, "Second, instead.")
    second, _ = await end_now(session)
    view = await store.world.view("suzune")
    assert [i.conversation_id for i in view.summaries] == [second.id]
    assert view.about(KAI).familiarity == pytest.approx(0.15)


async def test_a_pass_cut_off_by_a_restore_resumes_when_the_end_comes_back(store: Store) -> None:
    session = await open_suzune(store, WorldScript())
    await talk(session, "Hi.")
    await session.tree.save_branch("before")
    await talk(session, "My exam is on Friday.")
    conversation = await session.end_conversation(background=False)
    _, autosave = await session.tree.restore_branch("before")
    result = await session.world.run(conversation.id)
    assert result.stopped and (await store.world.view("suzune")).relationships == {}
    assert autosave is not None
    await session.tree.restore_branch(autosave.name)
    await session.world.wait()
    assert (await store.world.conversation(conversation.id)).state == "done"
    assert (await store.world.view("suzune")).about(KAI).goal
