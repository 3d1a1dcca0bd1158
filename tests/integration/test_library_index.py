"""The library index (issue 33, item 3): a command reads only the cards it
uses. Real character folders, the real database, `omoide` in a subprocess
against a scripted server for `say`."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from omoide.store import Store
from omoide.store.connection import migrate
from omoide.store.migrations import MIGRATIONS
from tests.faultserver import Reply, Request, stream_reply


def omoide(*args: str, env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "omoide.cli.app", *args], capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, "COLUMNS": "200", **(env or {})})


def character(home: Path, folder: str, name: str, description: str = "") -> Path:
    target = home / "data" / "characters" / folder
    target.mkdir(parents=True, exist_ok=True)
    (target / "character.toml").write_text(
        f'name = "{name}"\ndescription = "{description or name + " keeps the lighthouse."}"\nfirst_message = "Hi."\n',
        encoding="utf-8")
    return target


def replying(fault_server) -> dict[str, str]:  # type: ignore[no-untyped-def]
    class Forever(list):  # type: ignore[type-arg]
        def __bool__(self) -> bool:
            return True

        def pop(self, index: int = -1):  # type: ignore[no-untyped-def]
            return reply

    def reply(request: Request) -> Reply:
        if not request.path.endswith("/chat/completions"):
            return Reply(status=404, body=b"{}")
        return stream_reply("The tide is in.")

    fault_server.replies = Forever()
    return {"OMOIDE_BASE_URL": fault_server.base_url, "OMOIDE_MODEL": "scripted", "OMOIDE_USER_NAME": "Kai"}


def listed(home: Path) -> list[tuple[str, ...]]:
    """`characters list`'s rows: id, name, source, about."""
    result = omoide("characters", "list")
    assert result.returncode == 0, result.stderr
    return [tuple(cell.strip() for cell in line.strip().strip("│").split("│"))
            for line in result.stdout.splitlines() if line.startswith("│")]


def _reading_updates_atime(folder: Path) -> bool:
    probe = folder / "atime-probe"
    probe.write_text("x")
    os.utime(probe, (0, probe.stat().st_mtime))
    probe.read_text()
    updated = probe.stat().st_atime > 0
    probe.unlink()
    return updated


async def test_say_to_one_character_never_opens_another_card(omoide_home: Path, fault_server) -> None:  # type: ignore[no-untyped-def]
    """Once the library is indexed, `say` to Bob reads Bob's card only. Alice's
    file has its access time set to 1970 after indexing, so reading it (on this
    relatime file system) would move it. Before the index every command read
    every card, and every card in the library too for the mention scanner."""
    character(omoide_home, "alice", "Alice")
    character(omoide_home, "bob", "Bob")
    if not _reading_updates_atime(omoide_home):
        pytest.skip("this file system does not record when a file is read")
    env = replying(fault_server)
    first = await asyncio.to_thread(omoide, "say", "Bob", "Hello.", env=env)
    assert first.returncode == 0, first.stderr
    alice = omoide_home / "data" / "characters" / "alice" / "character.toml"
    bob = omoide_home / "data" / "characters" / "bob" / "character.toml"
    for toml in (alice, bob):
        os.utime(toml, ns=(0, toml.stat().st_mtime_ns))
    again = await asyncio.to_thread(omoide, "say", "Bob", "Still there?", env=env)
    assert again.returncode == 0, again.stderr
    assert "The tide is in." in again.stdout
    assert bob.stat().st_atime > 0  # the card talked to is read (the check can see a read)
    assert alice.stat().st_atime == 0, "say to Bob read Alice's card"


async def test_a_changed_card_is_read_again_a_removed_one_drops_out_a_new_one_appears(
    omoide_home: Path, fault_server  # type: ignore[no-untyped-def]
) -> None:
    alice = character(omoide_home, "alice", "Alice")
    character(omoide_home, "bob", "Bob")
    shown = listed(omoide_home)
    assert ("alice", "Alice", "user", "Alice keeps the lighthouse.") in shown and ("bob", "Bob", "user", "Bob keeps the lighthouse.") in shown
    database = omoide_home / "data" / "omoide.db"
    indexed = sqlite3.connect(database).execute("SELECT folder, name FROM library_cards WHERE bundled = 0 ORDER BY folder").fetchall()
    assert indexed == [("alice", "Alice"), ("bob", "Bob")]

    character(omoide_home, "alice", "Alicia", "Alicia sails at dawn.")  # edited in place: the folders are the same
    shown = listed(omoide_home)
    assert ("alice", "Alicia", "user", "Alicia sails at dawn.") in shown and not any("Alice" in row[1] for row in shown)
    env = replying(fault_server)
    said = await asyncio.to_thread(omoide, "say", "Alicia", "Morning.", env=env)
    assert said.returncode == 0, said.stderr

    character(omoide_home, "alice", "Alicia", "Alicia has a new boat.")  # and again, found by name through the index
    said = await asyncio.to_thread(omoide, "say", "Alicia", "Where to?", env=env)
    assert said.returncode == 0, said.stderr
    assert ("alice", "Alicia", "user", "Alicia has a new boat.") in listed(omoide_home)

    for item in alice.iterdir():
        item.unlink()
    alice.rmdir()
    shown = listed(omoide_home)
    assert [row[0] for row in shown if row[2] == "user"] == ["bob"]
    gone = await asyncio.to_thread(omoide, "say", "Alicia", "Hello?", env=env)
    assert gone.returncode == 1 and "There is no character called 'Alicia'" in " ".join(gone.stderr.split())

    character(omoide_home, "carol", "Carol")
    said = await asyncio.to_thread(omoide, "say", "Carol", "Hi Carol.", env=env)  # not listed first: found all the same
    assert said.returncode == 0, said.stderr
    assert ("carol", "Carol", "user", "Carol keeps the lighthouse.") in listed(omoide_home)


def test_a_folder_that_cannot_be_read_stays_listed_as_a_problem(omoide_home: Path) -> None:
    character(omoide_home, "bob", "Bob")
    (omoide_home / "data" / "characters" / "empty").mkdir()
    for _ in range(2):  # read, then from the index
        result = omoide("characters", "list")
        assert result.returncode == 0 and "│ bob " in result.stdout
        assert "empty has no character.toml" in " ".join(result.stderr.split())


async def test_the_index_migration_upgrades_a_database_made_before_it(tmp_path: Path) -> None:
    import aiosqlite

    path = tmp_path / "old.db"
    conn = await aiosqlite.connect(path, isolation_level=None)
    await conn.execute("PRAGMA application_id = 1869442921")
    before = [m for m in MIGRATIONS if m.name < "0022_library_index"]
    await migrate(conn, before)
    await conn.execute("INSERT INTO chats (character, title, created_at, updated_at) VALUES "
                       "('wren', 'old', '2026-01-01T00:00:00+00:00', '2026-01-01T00:00:00+00:00')")
    await conn.close()
    assert "library_cards" not in {r[0] for r in sqlite3.connect(path).execute("SELECT name FROM sqlite_schema")}

    store = await Store.open(path)
    chats = await store.chats.list()
    await store.close()
    assert [c.title for c in chats] == ["old"]
    tables = {r[0] for r in sqlite3.connect(path).execute("SELECT name FROM sqlite_schema")}
    assert {"library_cards", "library_dirs"} <= tables


async def test_the_picker_lists_from_the_index_and_reads_only_the_card_chosen(omoide_home: Path, store: Store) -> None:
    """`/characters` with an indexed library: every name and description is shown
    without a card being read; Enter reads the one chosen and the chat switches to it."""
    from omoide.characters.library import Library
    from omoide.config.settings import load_settings
    from omoide.chat.session import ChatSession
    from omoide.store.library import CardIndexFile
    from omoide.tui.app import OmoideApp
    from tests.scripted import ScriptedBackend
    from tests.tui.test_app import type_and_send, wait_for

    folders = [character(omoide_home, name.lower(), name) for name in ("Alice", "Bob", "Carol")]
    if not _reading_updates_atime(omoide_home):
        pytest.skip("this file system does not record when a file is read")
    bob = Library(CardIndexFile(store.db.path)).find("Bob")  # indexes the library
    for folder in folders:
        toml = folder / "character.toml"
        os.utime(toml, ns=(0, toml.stat().st_mtime_ns))
    session = await ChatSession.open(store, bob, load_settings(), ScriptedBackend())
    app = OmoideApp(session)
    async with app.run_test(size=(100, 40)) as pilot:
        await wait_for(pilot, lambda: app.query_one("#input").has_focus)
        await type_and_send(pilot, "/characters")
        await wait_for(pilot, lambda: bool(app.screen.query("#characters")))
        await pilot.pause()
        shown = "\n".join(strip.text for strip in app.screen._compositor.render_strips())
        for name in ("Alice", "Bob", "Carol"):
            assert name in shown and f"{name} keeps the lighthouse." in shown
        assert [(f / "character.toml").stat().st_atime for f in folders] == [0, 0, 0], "the picker read a card"
        options = app.screen.query_one("#characters")
        ids = [options.get_option_at_index(i).id for i in range(options.option_count)]  # type: ignore[attr-defined]
        options.highlighted = ids.index("carol")  # type: ignore[attr-defined]
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.session.character.name == "Carol")
    assert (folders[2] / "character.toml").stat().st_atime > 0
    assert (folders[0] / "character.toml").stat().st_atime == 0


def test_a_long_list_is_printed_as_plain_columns_with_every_character(omoide_home: Path) -> None:
    for i in range(205):
        character(omoide_home, f"c{i:03d}", f"Card {i}", "{{char}} waits for {{user}} at the pier.")
    (omoide_home / "data" / "characters" / "broken").mkdir()
    result = omoide("characters", "list")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["id", "name", "source", "about"]
    rows = [line.split(None, 4) for line in lines[1:]]
    assert [r[0] for r in rows if r[0].startswith("c")] == [f"c{i:03d}" for i in range(205)]
    assert ["c007", "Card", "7", "user", "Card 7 waits for you at the pier."] in rows
    assert "broken has no character.toml" in " ".join(result.stderr.split())


def test_characters_list_reads_only_the_cards_that_changed(omoide_home: Path) -> None:
    alice = character(omoide_home, "alice", "Alice") / "character.toml"
    bob = character(omoide_home, "bob", "Bob") / "character.toml"
    if not _reading_updates_atime(omoide_home):
        pytest.skip("this file system does not record when a file is read")
    listed(omoide_home)  # indexes the library
    character(omoide_home, "bob", "Bob", "Bob mends nets.")
    for toml in (alice, bob):
        os.utime(toml, ns=(0, toml.stat().st_mtime_ns))
    assert ("bob", "Bob", "user", "Bob mends nets.") in listed(omoide_home)
    assert bob.stat().st_atime > 0 and alice.stat().st_atime == 0, "characters list read an unchanged card"


def crew(home: Path, count: int) -> None:
    """`count` characters no message below names, each with a name of its own."""
    for i in range(count):
        character(home, f"c{i:03d}", f"Crew{i:03d} Member")


class RowsRead:
    """Every row the library index hands out (store/library.py reads through
    `_read` and `_read_if`), and how often it opened the file."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        from omoide.store.library import CardIndexFile

        self.rows = 0
        self.opened = 0
        read, read_if, connection = CardIndexFile._read, CardIndexFile._read_if, CardIndexFile._connection

        def counted(index: CardIndexFile, sql: str, params: Sequence[object] = ()) -> list[tuple[object, ...]]:
            rows = read(index, sql, params)
            self.rows += len(rows)
            return rows

        def counted_if(index: CardIndexFile, dirs: dict[str, str],
                       statements: Sequence[tuple[str, Sequence[object]]]) -> list[tuple[object, ...]] | None:
            rows = read_if(index, dirs, statements)
            self.rows += len(rows or ())
            return rows

        def opening(index: CardIndexFile):  # type: ignore[no-untyped-def]
            self.opened += 1
            return connection(index)

        monkeypatch.setattr(CardIndexFile, "_read", counted)
        monkeypatch.setattr(CardIndexFile, "_read_if", counted_if)
        monkeypatch.setattr(CardIndexFile, "_connection", opening)


async def test_a_turn_reads_only_the_index_rows_of_the_names_its_messages_may_hold(
    omoide_home: Path, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With 300 characters in the library, the hidden notes on the characters a
    message names (a name of two words, one with accents, any letter case) are
    found from a handful of index rows, not by reading every name. Before, each
    command read every name in the index and built a scanner over them all."""
    from omoide.characters.library import Library
    from omoide.chat.session import ChatSession
    from omoide.config.settings import Settings
    from omoide.store.library import CardIndexFile
    from tests.scripted import ScriptedBackend

    crew(omoide_home, 300)
    character(omoide_home, "oldtom", "Old Tom")
    character(omoide_home, "zoe", "Zoë Ångström")
    character(omoide_home, "alice", "Alice")
    Library(CardIndexFile(store.db.path)).entries()  # indexes the library, as any command does
    read = RowsRead(monkeypatch)
    chat = ScriptedBackend()
    session = await ChatSession.open(store, Library(CardIndexFile(store.db.path)).find("alice"),
                                     Settings(user_name="Kai", gossip_rate=0.0), chat)
    async for _ in session.send("Did OLD TOM see zoë ångström, crew012 member or Alice at the pier? Crew0130 did not."):
        pass
    tail = chat.calls[-1]["messages"][-1]["content"]
    assert "Old Tom was just mentioned." in tail and "Zoë Ångström was just mentioned." in tail
    assert "Crew012 Member was just mentioned." in tail
    assert "Crew013 Member" not in tail and "Alice was just mentioned" not in tail  # not a whole word; present
    assert read.rows < 20, f"a turn read {read.rows} rows of an index of 303 characters"
    assert read.opened <= 3, f"a turn opened the index {read.opened} times"  # the folders' stamps and the names in one connection

    conversation = await session.end_conversation(background=False)
    assert sorted(m.name for m in conversation.mentions) == ["Crew012 Member", "Old Tom", "Zoë Ångström"]
    assert read.rows < 40, f"the turn and the end of the conversation read {read.rows} rows of 303"


async def test_a_character_renamed_or_added_since_the_index_is_still_found_when_named(
    omoide_home: Path, store: Store
) -> None:
    """The folders win over the index: a card renamed in place is named by its new
    name once a listing saw it, and a new folder (the characters folder changed) at
    once, before the chat opens or during it."""
    from omoide.characters.library import Library
    from omoide.chat.session import ChatSession
    from omoide.config.settings import Settings
    from omoide.store.library import CardIndexFile
    from tests.scripted import ScriptedBackend

    crew(omoide_home, 3)
    character(omoide_home, "alice", "Alice")
    character(omoide_home, "tom", "Tom Bell")
    index = CardIndexFile(store.db.path)
    Library(index).entries()
    character(omoide_home, "tom", "Captain Bellamy")
    Library(index).entries()  # a listing reads the changed card again
    character(omoide_home, "mira", "Mira Sol")
    chat = ScriptedBackend()
    session = await ChatSession.open(store, Library(index).find("alice"), Settings(user_name="Kai", gossip_rate=0.0), chat)
    async for _ in session.send("Captain Bellamy and Mira Sol sailed; Tom Bell did not."):
        pass
    tail = chat.calls[-1]["messages"][-1]["content"]
    assert "Captain Bellamy was just mentioned." in tail and "Mira Sol was just mentioned." in tail
    assert "Tom Bell was just mentioned" not in tail

    character(omoide_home, "nell", "Nell Quay")  # during the chat: the index cannot answer until the folders are read
    async for _ in session.send("Nell Quay rowed out."):
        pass
    assert "Nell Quay was just mentioned." in chat.calls[-1]["messages"][-1]["content"]


async def test_omoide_say_finds_the_names_in_an_index_made_before_names_were_indexed_by_word(
    omoide_home: Path, fault_server  # type: ignore[no-untyped-def]
) -> None:
    """A database indexed by the release before (migration 0022 only) is indexed again on
    upgrade, so `omoide say` still tells the model who was just mentioned."""
    character(omoide_home, "alice", "Alice")
    character(omoide_home, "oldtom", "Old Tom")
    assert omoide("characters", "list").returncode == 0  # made and indexed by this release
    database = omoide_home / "data" / "omoide.db"
    with sqlite3.connect(database) as conn:  # as the release before left it: the index without its words
        conn.execute("DROP TABLE library_words")
        conn.execute("DELETE FROM schema_migrations WHERE name >= '0023_library_words'")
    conn.close()
    env = replying(fault_server)
    said = await asyncio.to_thread(omoide, "say", "alice", "Have you seen old tom?", env=env)
    assert said.returncode == 0, said.stderr
    sent = fault_server.requests[-1].json()["messages"][-1]["content"]
    assert "Old Tom was just mentioned." in sent


async def test_a_name_after_a_thousand_other_words_is_still_found(omoide_home: Path, store: Store) -> None:
    """The words of a long message are looked up in several statements (store/library.py's
    WORDS_PER_QUERY): a name whose word comes after the first statement's is found."""
    from omoide.characters.library import Library
    from omoide.chat.session import ChatSession
    from omoide.config.settings import Settings
    from omoide.store.library import WORDS_PER_QUERY, CardIndexFile
    from tests.scripted import ScriptedBackend

    character(omoide_home, "alice", "Alice")
    character(omoide_home, "zed", "Zed Quill")
    index = CardIndexFile(store.db.path)
    Library(index).entries()
    filler = " ".join(f"aa{i:04d}" for i in range(2 * WORDS_PER_QUERY + 10))  # sorted before "zed"
    chat = ScriptedBackend()
    session = await ChatSession.open(store, Library(index).find("alice"), Settings(user_name="Kai", gossip_rate=0.0), chat)
    async for _ in session.send(f"{filler} and then Zed Quill came."):
        pass
    assert "Zed Quill was just mentioned." in chat.calls[-1]["messages"][-1]["content"]
