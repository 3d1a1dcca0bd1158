"""The store on real SQLite files."""

from __future__ import annotations

import sqlite3
from collections.abc import Awaitable, Callable
from datetime import datetime
from pathlib import Path

import pytest

from omoide.domain.chat import DiaryAuthor, MessageStatus, Role
from omoide.errors import NotAnOmoideDatabase, NotFound, StoreError
from omoide.memory.corrections import CUES
from omoide.store import SearchHit, Store
from omoide.store.connection import migrate
from omoide.store.migrations import MIGRATIONS


async def test_database_is_in_wal_mode_with_foreign_keys(tmp_path: Path) -> None:
    s = await Store.open(tmp_path / "omoide.db")
    await s.chats.create("suzune", greeting="Hello")
    fk = await s.db.one("PRAGMA foreign_keys")
    await s.close()
    raw = sqlite3.connect(tmp_path / "omoide.db")
    assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert fk[0] == 1
    raw.close()


async def test_every_migration_is_recorded_by_name(store: Store) -> None:
    rows = await store.db.all("SELECT name FROM schema_migrations ORDER BY name")
    assert [r[0] for r in rows] == [m.name for m in MIGRATIONS]


async def test_migrations_upgrade_an_old_database_and_keep_its_rows(tmp_path: Path) -> None:
    import aiosqlite

    path = tmp_path / "old.db"
    conn = await aiosqlite.connect(path, isolation_level=None)
    await conn.execute("PRAGMA application_id = 1869442921")
    await migrate(conn, MIGRATIONS[:1])  # a database made by the first release
    await conn.execute("INSERT INTO chats (character, title, created_at, updated_at) VALUES ('wren', 'old', '2026-01-01T00:00:00+00:00', '2026-01-01T00:00:00+00:00')")
    await conn.close()

    s = await Store.open(path)
    chats = await s.chats.list()
    applied = [r[0] for r in await s.db.all("SELECT name FROM schema_migrations")]
    await s.close()
    assert [c.title for c in chats] == ["old"]
    assert set(applied) == {m.name for m in MIGRATIONS}


async def test_each_migration_applies_on_top_of_the_previous_ones(tmp_path: Path) -> None:
    import aiosqlite

    for i in range(1, len(MIGRATIONS) + 1):
        conn = await aiosqlite.connect(tmp_path / f"step{i}.db", isolation_level=None)
        await migrate(conn, MIGRATIONS[:i])
        tables = {r[0] for r in await (await conn.execute("SELECT name FROM sqlite_schema WHERE type='table'")).fetchall()}
        await conn.close()
        assert "schema_migrations" in tables
        assert "chats" in tables and "messages" in tables


async def test_the_pins_migration_upgrades_a_database_from_before_it(tmp_path: Path) -> None:
    import aiosqlite

    from omoide.domain.chat import PinSource

    path = tmp_path / "before_pins.db"
    conn = await aiosqlite.connect(path, isolation_level=None)
    await conn.execute("PRAGMA application_id = 1869442921")
    await migrate(conn, [m for m in MIGRATIONS if m.name != "0021_pins"])
    await conn.execute("INSERT INTO chats (character, title, created_at, updated_at) VALUES ('mika', 'old', '2026-01-01T00:00:00+00:00', '2026-01-01T00:00:00+00:00')")
    await conn.close()

    s = await Store.open(path)
    try:
        assert [c.title for c in await s.chats.list()] == ["old"]
        pin = await s.pins.add("mika", "Kai's cat is Biscuit.", PinSource.TYPED)
        assert [p.content for p in await s.pins.list("mika")] == ["Kai's cat is Biscuit."] and await s.pins.list("wren") == []
        await s.pins.remove("mika", pin.id)
        assert await s.pins.list("mika") == [] and (await s.pins.get(pin.id)).content == "Kai's cat is Biscuit."
    finally:
        await s.close()


async def test_greeting_is_the_first_message_and_the_head(store: Store) -> None:
    chat = await store.chats.create("suzune", greeting="Welcome in.")
    path = await store.messages.path(chat.head_id)
    assert [(m.role, m.content) for m in path] == [(Role.ASSISTANT, "Welcome in.")]


async def test_messages_form_a_tree_and_nothing_is_lost(store: Store) -> None:
    chat = await store.chats.create("suzune", greeting="Hi")
    user = await store.messages.add(chat.id, chat.head_id, Role.USER, "Coffee?")
    first = await store.messages.add(chat.id, user.id, Role.ASSISTANT, "Black.")
    second = await store.messages.add(chat.id, user.id, Role.ASSISTANT, "With milk.")
    assert [m.content for m in await store.messages.siblings(second)] == ["Black.", "With milk."]
    assert [m.content for m in await store.messages.path(second.id)] == ["Hi", "Coffee?", "With milk."]
    assert [m.content for m in await store.messages.path(first.id)] == ["Hi", "Coffee?", "Black."]
    assert await store.messages.count(chat.id) == 4
    assert (await store.chats.get(chat.id)).head_id == second.id


async def test_path_paging_returns_the_newest_messages(store: Store) -> None:
    chat = await store.chats.create("suzune", greeting="0")
    head = chat.head_id
    for i in range(1, 50):
        head = (await store.messages.add(chat.id, head, Role.USER if i % 2 else Role.ASSISTANT, str(i))).id
    page = await store.messages.path(head, limit=10)
    assert [m.content for m in page] == [str(i) for i in range(40, 50)]


async def test_chat_resumes_at_its_head_after_reopening(tmp_path: Path) -> None:
    s = await Store.open(tmp_path / "omoide.db")
    chat = await s.chats.create("wren", greeting="Ahoy")
    reply = await s.messages.add(chat.id, chat.head_id, Role.USER, "Any islands today?")
    await s.close()
    s = await Store.open(tmp_path / "omoide.db")
    again = await s.chats.latest("wren")
    await s.close()
    assert again is not None and again.head_id == reply.id and again.message_count == 2


async def test_a_reply_left_streaming_by_a_crash_reads_as_interrupted(store: Store) -> None:
    chat = await store.chats.create("wren", greeting="Ahoy")
    reply = await store.messages.add(chat.id, chat.head_id, Role.ASSISTANT, "Half a sen", status=MessageStatus.STREAMING)
    assert await store.messages.mark_streaming_interrupted(chat.id) == 1
    assert (await store.messages.get(reply.id)).status is MessageStatus.INTERRUPTED


@pytest.mark.parametrize(
    "content",
    [b"this is a text file, not a database\n" * 10, b"\x00\x01garbage" * 500],
)
async def test_a_file_that_is_not_sqlite_is_refused_and_left_alone(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "omoide.db"
    path.write_bytes(content)
    with pytest.raises(NotAnOmoideDatabase) as info:
        await Store.open(path)
    assert str(path) in info.value.message and info.value.hint
    assert path.read_bytes() == content


async def test_another_programs_sqlite_database_is_refused_and_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "omoide.db"
    raw = sqlite3.connect(path)
    raw.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)")
    raw.execute("INSERT INTO invoices (total) VALUES (12.5)")
    raw.commit()
    raw.close()
    before = path.read_bytes()
    with pytest.raises(NotAnOmoideDatabase, match="another program"):
        await Store.open(path)
    assert path.read_bytes() == before


async def test_a_corrupt_omoide_database_is_refused_not_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "omoide.db"
    s = await Store.open(path)
    chat = await s.chats.create("wren", greeting="Ahoy")
    for i in range(200):
        await s.messages.add(chat.id, chat.head_id, Role.USER, "x" * 500)
    await s.close()
    data = bytearray(path.read_bytes())
    data[100:4096 * 3] = b"\xff" * (4096 * 3 - 100)  # smash the schema pages, keep the header
    path.write_bytes(bytes(data))
    with pytest.raises(NotAnOmoideDatabase):
        s = await Store.open(path)
        await s.chats.list()
    assert path.read_bytes() == bytes(data)


async def test_branches_save_restore_and_autosave(store: Store) -> None:
    chat = await store.chats.create("suzune", greeting="Hi")
    a = await store.messages.add(chat.id, chat.head_id, Role.USER, "a")
    await store.branches.save(chat.id, "before", a.id)
    b = await store.messages.add(chat.id, a.id, Role.ASSISTANT, "b")
    with pytest.raises(StoreError, match="already exists"):
        await store.branches.save(chat.id, "before", b.id)
    target, saved = await store.branches.restore(chat.id, "before", autosave_name="auto-1")
    assert target.message_id == a.id and saved is not None and saved.message_id == b.id
    assert (await store.chats.get(chat.id)).head_id == a.id
    with pytest.raises(NotFound, match="before"):
        await store.branches.restore(chat.id, "missing", autosave_name=None)


async def test_diary_and_summary_follow_the_path(store: Store) -> None:
    chat = await store.chats.create("suzune", greeting="Hi")
    fork = await store.messages.add(chat.id, chat.head_id, Role.USER, "fork here")
    left = await store.messages.add(chat.id, fork.id, Role.ASSISTANT, "left")
    await store.memory.add_diary_entry(chat.id, left.id, "only on the left", DiaryAuthor.CHARACTER)
    await store.memory.add_summary(chat.id, left.id, content="left summary", covers_to_id=fork.id, diary_to_id=None)
    left_next = await store.messages.add(chat.id, left.id, Role.USER, "go on")
    right = await store.messages.add(chat.id, fork.id, Role.ASSISTANT, "right")

    on_left = await store.memory.state(left_next.id)
    on_right = await store.memory.state(right.id)
    assert [e.content for e in on_left.diary] == ["only on the left"]
    assert on_left.summary is not None and on_left.summary.content == "left summary"
    assert [m.content for m in on_left.window] == ["left", "go on"]
    assert on_right.diary == [] and on_right.summary is None
    assert [m.content for m in on_right.window] == ["Hi", "fork here", "right"]


async def test_is_ancestor(store: Store) -> None:
    chat = await store.chats.create("suzune", greeting="Hi")
    a = await store.messages.add(chat.id, chat.head_id, Role.USER, "a")
    b = await store.messages.add(chat.id, a.id, Role.ASSISTANT, "b")
    c = await store.messages.add(chat.id, a.id, Role.ASSISTANT, "c")
    assert await store.messages.is_ancestor(chat.head_id, b.id)
    assert await store.messages.is_ancestor(a.id, a.id)
    assert not await store.messages.is_ancestor(b.id, c.id)
    assert not await store.messages.is_ancestor(b.id, a.id)


async def test_search_finds_words_across_branches_and_survives_odd_input(store: Store) -> None:
    chat = await store.chats.create("suzune", greeting="Welcome to Tsuki no Shizuku.")
    a = await store.messages.add(chat.id, chat.head_id, Role.USER, "The matcha latte was good")
    await store.messages.add(chat.id, a.id, Role.ASSISTANT, "Told you about the MATCHA.")
    reply = await store.messages.add(chat.id, a.id, Role.ASSISTANT, "streaming", status=MessageStatus.STREAMING)
    await store.messages.update(reply.id, content="A café near the station")
    hits = await store.messages.search("matcha", chat_id=chat.id)
    assert [h.message.content for h in hits] == ["Told you about the MATCHA.", "The matcha latte was good"]
    assert "[matcha]" in hits[1].snippet
    assert [h.message.id for h in await store.messages.search("café station")] == [reply.id]
    assert await store.messages.search("streaming") == []
    assert await store.messages.search('"unbalanced AND (') == []
    assert await store.messages.search("   ") == []


async def _steps(store: Store, query: Callable[[], Awaitable[object]]) -> int:
    """How many SQLite virtual-machine steps `query` takes (deterministic, unlike a time)."""
    steps = [0]

    def count() -> int:
        steps[0] += 1
        return 0

    await store.db.conn.set_progress_handler(count, 1)
    try:
        await query()
    finally:
        await store.db.conn.set_progress_handler(None, 1)
    return steps[0]


async def test_full_text_searches_in_a_chat_do_not_read_the_whole_chat(store: Store) -> None:
    """The corrections every turn looks for, and a search in one chat, read the
    index newest first: in a chat of 600 messages of which one matches, they
    take under ten SQLite steps a message, where testing each message of the
    chat against the index (as they used to) takes over a thousand."""
    chat = await store.chats.create("suzune", greeting="Welcome.")
    head = (await store.messages.add(chat.id, chat.head_id, Role.USER, "Actually my cat is Mochi, not Biscuit.")).id
    for i in range(600):
        head = (await store.messages.add(chat.id, head, Role.USER, f"Rain again today, tea number {i}.")).id

    async def corrections() -> list[tuple[int, datetime, str]]:
        return await store.recall.said_with(chat.id, CUES, limit=200)

    async def search() -> list[SearchHit]:
        return await store.messages.search("biscuit", chat_id=chat.id)

    assert [text for _, _, text in await corrections()] == ["Actually my cat is Mochi, not Biscuit."]
    assert [h.message.content for h in await search()] == ["Actually my cat is Mochi, not Biscuit."]
    assert await _steps(store, corrections) < 10 * 600
    assert await _steps(store, search) < 10 * 600


async def test_per_turn_queries_use_indexes(store: Store) -> None:
    plans = []
    for sql in (
        "SELECT id FROM summaries WHERE anchor_id = 1 ORDER BY id DESC LIMIT 1",
        "SELECT id FROM diary_entries WHERE message_id = 1 ORDER BY id DESC LIMIT 1",
        "SELECT id FROM messages WHERE parent_id = 1",
        "SELECT * FROM chats WHERE character = 'x' AND archived = 0 ORDER BY updated_at DESC",
        "SELECT * FROM branches WHERE chat_id = 1 AND name = 'x'",
    ):
        rows_ = await store.db.all(f"EXPLAIN QUERY PLAN {sql}")
        plans.append(" ".join(r["detail"] for r in rows_))
    for plan in plans:
        assert "SCAN" not in plan.replace("SCAN CONSTANT ROW", ""), plan


async def test_term_frequencies_count_every_chat_and_branch_in_one_statement_per_fifty_terms(store: Store) -> None:
    chat = await store.chats.create("suzune", greeting="Welcome.")
    other = await store.chats.create("wren", greeting="Hello.")
    a = await store.messages.add(chat.id, chat.head_id, Role.USER, "The kite flew over the harbour.")
    await store.messages.add(chat.id, a.id, Role.ASSISTANT, "A red kite!")
    await store.messages.add(chat.id, a.id, Role.ASSISTANT, "Kites again, and the harbour.")  # a swipe: another branch
    await store.messages.add(other.id, other.head_id, Role.USER, "No kite here.")
    terms = ["kite", "harbour", "nothing", *(f"word{n}" for n in range(60)), 'odd"quote']
    statements: list[str] = []
    await store.db.conn.set_trace_callback(statements.append)
    found = await store.recall.frequencies(terms)
    await store.db.conn.set_trace_callback(None)
    # The index stems (porter): "Kites" counts for "kite"
    assert found["kite"] == 4 and found["harbour"] == 2 and found["nothing"] == 0 and found['odd"quote'] == 0
    assert set(found) == set(terms)
    assert len([s for s in statements if not s.startswith("--")]) == 2  # (FTS5's own lookups start with --)
    capped = await store.recall.frequencies(["kite", "harbour"], at_most=3)  # what passages ask: read no further
    assert capped == {"kite": 3, "harbour": 2}


async def test_mentions_of_the_memories_asked_about_are_those_of_all_mentions(store: Store) -> None:
    chat = await store.chats.create("suzune", greeting="Welcome.")
    a = await store.messages.add(chat.id, chat.head_id, Role.USER, "the kite")
    await store.mentions.add(chat.id, a.id, "diary", [1, 2, 3])
    await store.mentions.add(chat.id, a.id, "memo", [2, 7])
    b = await store.messages.add(chat.id, a.id, Role.ASSISTANT, "the harbour")
    await store.mentions.add(chat.id, b.id, "memo", [7, 9])
    every = await store.mentions.at(b.id)
    asked = await store.mentions.at(b.id, only={"diary": {2}, "memo": {7, 8}})
    assert asked == [m for m in every if (m.kind, m.memory_id) in {("diary", 2), ("memo", 7)}]
    assert [(m.kind, m.memory_id, m.message_id) for m in asked] == [("diary", 2, a.id), ("memo", 7, a.id), ("memo", 7, b.id)]


async def test_a_kept_copys_mentions_reach_back_to_its_original(store: Store) -> None:
    chat = await store.chats.create("suzune", greeting="Welcome.")
    ids = [chat.head_id]
    original = copy = None
    for n in range(8):  # mentions are recorded as the chat goes, at its newest message
        ids.append((await store.messages.add(chat.id, ids[-1], Role.USER if n % 2 == 0 else Role.ASSISTANT, f"line {n}")).id)
        if n == 0:
            await store.mentions.add(chat.id, ids[-1], "diary", [999])  # before any memory in force: never read
        if n == 1:
            original = await store.memory.add_diary_entry(chat.id, ids[-1], "Kai's kite is red.", DiaryAuthor.CHARACTER)
        if n == 3 and original is not None:
            await store.mentions.add(chat.id, ids[-1], "diary", [original.id])
        if n == 5 and original is not None:
            copy = await store.memory.add_diary_entry(chat.id, ids[-1], "Kai's kite is red.", DiaryAuthor.COMPRESSION, origin_id=original.id)
        if n == 6 and copy is not None:
            await store.mentions.add(chat.id, ids[-1], "diary", [copy.memory_id, 999])
    assert copy is not None
    statements: list[str] = []
    await store.db.conn.set_trace_callback(statements.append)
    found = await store.mentions.at(ids[-1], only={"diary": {copy.memory_id}})
    await store.db.conn.set_trace_callback(None)
    assert [m.message_id for m in found] == [ids[4], ids[7]]  # the one before the copy was made counts for it
    assert len(statements) == 1
    assert await store.mentions.at(ids[-1], only={"diary": set()}) == []
    every = await store.mentions.at(ids[-1])
    assert [m.message_id for m in every] == [ids[1], ids[4], ids[7], ids[7]]


async def test_the_start_of_a_path_is_the_first_message_the_path_reads(store: Store) -> None:
    chat = await store.chats.create("suzune", greeting="Welcome.")
    ids = [chat.head_id]
    for n in range(6):
        ids.append((await store.messages.add(chat.id, ids[-1], Role.USER if n % 2 == 0 else Role.ASSISTANT, f"line {n}")).id)
    swipe = await store.messages.add(chat.id, ids[3], Role.USER, "another branch")
    for head in (ids[-1], swipe.id, ids[0]):
        for limit in (None, 1, 3, 100):
            for stop in (None, ids[1], ids[2], head):
                path = await store.messages.path(head, limit=limit, stop_before=stop)
                start = await store.messages.path_start(head, limit=limit, stop_before=stop)
                assert start == (path[0].id if path else None), (head, limit, stop)
