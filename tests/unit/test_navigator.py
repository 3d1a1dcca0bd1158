"""The navigator on a real SQLite file: paging, goto, search, branch distances,
and the character's chat list."""

from __future__ import annotations

import pytest

from omoide.domain.chat import Chat, Role
from omoide.errors import CommandError, NotFound
from omoide.chat.navigator import Navigator, parse_moment
from omoide.store import ImportNode, Store


def at(day: int, hour: int = 12) -> str:
    return f"2026-03-{day:02d}T{hour:02d}:00:00.000000+00:00"


# greeting -> u1 -> a1 -> u2 -> a2 (head); a1 -> u2b -> a2b is another branch.
TREE = [
    ImportNode(None, Role.ASSISTANT, "Welcome to the lighthouse.", at(1)),
    ImportNode(0, Role.USER, "Is the lamp lit?", at(5)),
    ImportNode(1, Role.ASSISTANT, "Every night.", at(5, 13)),
    ImportNode(2, Role.USER, "Show me the stairs.", at(10)),
    ImportNode(3, Role.ASSISTANT, "Ninety-nine steps up.", at(10, 13)),
    ImportNode(2, Role.USER, "Let us row to the island instead.", at(11)),
    ImportNode(5, Role.ASSISTANT, "Grab the oars.", at(11, 13)),
]


async def lighthouse(store: Store) -> tuple[Chat, list[int]]:
    chat = await store.chats.import_tree("mika", "The lighthouse", TREE, head_index=4)
    ids = [m.id for m in await store.messages.tree(chat.id)]
    return chat, ids


async def test_pages_of_the_path_come_oldest_first(store: Store) -> None:
    chat, ids = await lighthouse(store)
    nav = Navigator(store, chat)
    assert [m.id for m in await nav.path(chat.head_id, limit=2)] == [ids[3], ids[4]]
    assert [m.id for m in await nav.start(ids[4], 2)] == [ids[0], ids[1]]
    assert [m.id for m in await nav.path_slice(ids[6], 2, 10)] == [ids[2], ids[5], ids[6]]
    assert await nav.path(None, limit=5) == []


async def test_a_slice_ending_where_the_story_has_not_branched_is_the_same_from_every_branch(store: Store) -> None:
    """Depths 0-2 have one message each (the walk starts there), 3 and 4 two."""
    chat, ids = await lighthouse(store)
    nav = Navigator(store, chat)
    for head in (ids[4], ids[6]):
        assert [m.id for m in await nav.start(head, 3)] == [ids[0], ids[1], ids[2]]
    assert [m.id for m in await nav.path_slice(ids[4], 1, 3)] == [ids[1], ids[2], ids[3]]
    assert [m.id for m in await nav.path_slice(ids[6], 1, 3)] == [ids[1], ids[2], ids[5]]
    assert [m.id for m in await nav.path_slice(ids[2], 0, 5)] == [ids[0], ids[1], ids[2]]


async def test_goto_finds_a_message_on_the_path_and_explains_one_that_is_not(store: Store) -> None:
    chat, ids = await lighthouse(store)
    other = await store.chats.create("mika", title="Another day", greeting="Hello again.")
    nav = Navigator(store, chat)
    head = chat.head_id
    assert (await nav.goto(f"#{ids[1]}", head)).content == "Is the lamp lit?"
    assert (await nav.goto(f" {ids[3]} ", head)).content == "Show me the stairs."
    with pytest.raises(CommandError) as off_path:
        await nav.goto(f"#{ids[5]}", head)
    assert f"Message #{ids[5]} is on a path of the story no saved branch holds" in off_path.value.message
    assert "/branch list" in off_path.value.hint
    await store.branches.save(chat.id, "aside", ids[5])
    with pytest.raises(CommandError) as named:
        await nav.goto(f"#{ids[5]}", head)
    assert f"Message #{ids[5]} is on the branch 'aside'" in named.value.message and "/branch restore aside" in named.value.hint
    assert other.head_id is not None
    with pytest.raises(CommandError, match="in another chat"):
        await nav.locate(other.head_id, head)  # type: ignore[arg-type]
    with pytest.raises(NotFound):
        await nav.goto("#99999", head)
    with pytest.raises(CommandError) as usage:
        await nav.goto("  ", head)
    assert "/goto #1234" in usage.value.hint


async def test_goto_a_date_finds_the_first_message_written_on_or_after_it_on_this_branch(store: Store) -> None:
    chat, ids = await lighthouse(store)
    nav = Navigator(store, chat)
    # Days apart, so the local time zone cannot move the answer.
    assert (await nav.goto("2026-03-03", chat.head_id)).id == ids[1]
    assert (await nav.goto("2026-03-08 09:30", chat.head_id)).id == ids[3]
    with pytest.raises(CommandError, match="Nothing was written on or after 2026-03-12 on this branch"):
        await nav.goto("2026-03-12", chat.head_id)
    # On the other branch, the 11th has a message.
    assert (await nav.goto("2026-03-11", ids[6])).id == ids[5]
    with pytest.raises(CommandError, match="'next tuesday' is not a date I can read"):
        await nav.goto("next tuesday", chat.head_id)


def test_parse_moment_reads_the_formats_goto_accepts() -> None:
    assert parse_moment("2026-04-01") is not None and parse_moment("2026-04-01 20:15") is not None
    assert parse_moment("04/01") is not None and parse_moment("04/01 20:15") is not None
    assert parse_moment("April first") is None and parse_moment("2026-13-01") is None
    assert parse_moment("2026-04-01 20:15") > parse_moment("2026-04-01")  # type: ignore[operator]


async def test_search_stays_in_this_chat(store: Store) -> None:
    chat, ids = await lighthouse(store)
    await store.chats.create("mika", title="Elsewhere", greeting="The lighthouse is far from here.")
    hits = await Navigator(store, chat).search("lighthouse")
    assert [h.message.id for h in hits] == [ids[0]] and "[lighthouse]" in hits[0].snippet


async def test_branches_say_how_far_each_lies_from_the_path(store: Store) -> None:
    chat, ids = await lighthouse(store)
    await store.branches.save(chat.id, "island", ids[6])
    await store.branches.save(chat.id, "stairs", ids[4])
    await store.branches.save(chat.id, "start", ids[0])
    nav = Navigator(store, chat)
    rows = {b.branch.name: b for b in await nav.branches(chat.head_id)}
    assert (rows["island"].since_fork, rows["island"].here, rows["island"].opening) == (2, False, "Grab the oars.")
    assert (rows["stairs"].since_fork, rows["stairs"].here) == (0, True)
    assert (rows["start"].since_fork, rows["start"].here) == (0, False)
    # With no head, each is counted from the root.
    assert {b.branch.name: b.since_fork for b in await nav.branches(None)} == {"island": 5, "stairs": 5, "start": 1}


async def test_the_chat_list_is_this_characters_and_renames_and_archives(store: Store) -> None:
    chat, _ = await lighthouse(store)
    second = await store.chats.create("mika", title="Second")
    await store.chats.create("wren", title="Not Mika's")
    nav = Navigator(store, chat)
    assert {c.title for c in await nav.chats()} == {"The lighthouse", "Second"}
    assert (await nav.rename(second.id, "  The island  ")).title == "The island"
    await nav.archive(second.id)
    assert [c.title for c in await nav.chats()] == ["The lighthouse"]
    assert {c.title for c in await nav.chats(include_archived=True)} == {"The lighthouse", "The island"}
    await nav.archive(second.id, False)
    assert len(await nav.chats()) == 2
