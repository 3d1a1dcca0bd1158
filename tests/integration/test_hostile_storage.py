"""Hostile or odd storage and settings, through the CLI in a subprocess: a
database from a newer omoide, a database path that is a directory, a URL that
is not one, unknown config keys, file permissions."""

from __future__ import annotations

import asyncio
import hashlib
import os
import sqlite3
import stat
from pathlib import Path

import pytest

from omoide.store import Store
from tests.integration.test_hostile_text import omoide


def db_path(home: Path) -> Path:
    return home / "data" / "omoide.db"


def test_a_database_from_a_newer_omoide_is_refused_before_it_is_touched(omoide_home: Path) -> None:
    async def make() -> None:
        store = await Store.open(db_path(omoide_home))
        await store.chats.create("suzune", greeting="hi")
        async with store.db.write() as conn:
            await conn.execute("INSERT INTO schema_migrations VALUES ('0099_from_the_future', '2030-01-01')")
        await store.close()

    asyncio.run(make())
    raw = sqlite3.connect(db_path(omoide_home))
    raw.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    raw.close()
    before = hashlib.sha256(db_path(omoide_home).read_bytes()).hexdigest()
    for args in (("chats",), ("say", "suzune", "hello")):
        result = omoide(*args)
        text = result.stderr.decode()
        assert result.returncode == 1 and "Traceback" not in text, text
        assert "newer omoide" in text and "0099_from_the_future" in text and "Upgrade" in text
    assert hashlib.sha256(db_path(omoide_home).read_bytes()).hexdigest() == before
    rows = sqlite3.connect(db_path(omoide_home)).execute("SELECT count(*) FROM messages").fetchone()[0]
    assert rows == 1


def test_a_database_path_that_is_a_directory_is_named(omoide_home: Path) -> None:
    db_path(omoide_home).mkdir(parents=True)
    for args in (("chats",), ("doctor",)):
        result = omoide(*args)
        text = (result.stdout + result.stderr).decode()
        assert result.returncode == 1 and "Traceback" not in text, text
        assert "is a directory" in text


@pytest.mark.parametrize("url", ["::::", "localhost:11434", "ftp://example.com/v1"])
def test_a_base_url_that_is_not_one_is_named(url: str) -> None:
    for args in (("say", "suzune", "hi"), ("doctor",)):
        result = omoide(*args, env={"OMOIDE_BASE_URL": url})
        text = (result.stdout + result.stderr).decode()
        assert result.returncode == 1 and "Traceback" not in text, text
        assert "base_url" in text and url in text


@pytest.mark.skipif(os.name != "posix", reason="POSIX file modes")
def test_the_database_wal_logs_and_folders_are_private_and_doctor_says_when_not(omoide_home: Path) -> None:
    os.umask(0o022)  # the usual umask, under which files come out 0644
    result = omoide("say", "suzune", "hi", env={"OMOIDE_BASE_URL": "http://127.0.0.1:9/v1"})
    assert result.returncode == 1
    db = db_path(omoide_home)
    made = [omoide_home, omoide_home / "data", omoide_home / "logs", db, omoide_home / "logs" / "omoide.log"]
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in made}
    assert modes == {omoide_home.name: 0o700, "data": 0o700, "logs": 0o700, "omoide.db": 0o600, "omoide.log": 0o600}
    probe = sqlite3.connect(db)  # a reader keeps the WAL and shm files in place
    probe.execute("PRAGMA journal_mode").fetchone()
    probe.execute("SELECT count(*) FROM messages").fetchone()
    for side in ("omoide.db-wal", "omoide.db-shm"):
        assert stat.S_IMODE((db.parent / side).stat().st_mode) == 0o600, side
    probe.close()
    assert "permissions" not in omoide("doctor").stdout.decode()
    db.chmod(0o644)
    text = omoide("doctor").stdout.decode()
    assert f"{db} can be read by other users (mode 644)" in text.replace("\n", "") and "chmod 600" in text
    assert "All good" not in text


def test_unknown_config_keys_are_named_with_the_closest_known_one(omoide_home: Path) -> None:
    config = omoide_home / "config" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('temprature = 0.5\nuser_nmae = "Kai"\nfrobnicate = 1\n')
    doctor = omoide("doctor")
    text = doctor.stdout.decode().replace("\n", " ")
    assert "Unknown setting 'temprature'" in text and "Did you mean 'temperature'?" in text
    assert "'user_nmae'" in text and "'user_name'" in text and "'frobnicate'" in text
    assert "All good" not in text and doctor.returncode == 1
    chats = omoide("chats")
    assert chats.returncode == 0 and "Did you mean 'temperature'?" in chats.stderr.decode().replace("\n", " ")


async def test_a_message_sent_on_a_full_disk_stays_in_the_composer(tmp_path: Path) -> None:
    from omoide.config.settings import Settings
    from omoide.chat.session import ChatSession
    from omoide.tui.app import OmoideApp
    from tests.scripted import ScriptedBackend
    from tests.tui.test_app import MIKA, notices, type_and_send, wait_for

    store = await Store.open(tmp_path / "omoide.db")
    settings = Settings(user_name="Kai")
    session = await ChatSession.open(store, MIKA, settings, ScriptedBackend([["Hello."]]))
    pages = (await store.db.one("PRAGMA page_count"))[0]
    await store.db.conn.execute(f"PRAGMA max_page_count = {pages}")  # SQLite's own 'disk full'
    app = OmoideApp(session)
    async with app.run_test(size=(110, 36)) as pilot:
        await type_and_send(pilot, "A long letter I would hate to lose " + "word " * 800)
        await wait_for(pilot, lambda: any("full" in n for n in notices(app)))
        assert app.query_one("#input").value.startswith("A long letter I would hate to lose")
        await store.db.conn.execute(f"PRAGMA max_page_count = {pages * 100}")  # space is freed
        await pilot.press("enter")
        await wait_for(pilot, lambda: not app.turn_running and len(app.transcript.views()) == 3)
        assert app.query_one("#input").value == ""
    await store.close()


def test_starting_on_a_full_disk_says_the_disk_is_full(small_disk: Path) -> None:
    home = small_disk / "home"
    assert omoide("chats", env={"OMOIDE_HOME": str(home)}).returncode == 0
    filler = small_disk / "filler.big"
    with filler.open("wb") as fh:
        try:
            while True:
                fh.write(b"\0" * 65536)
        except OSError:
            pass
    result = omoide("say", "suzune", "hello", env={"OMOIDE_HOME": str(home), "OMOIDE_BASE_URL": "http://127.0.0.1:9/v1"})
    text = " ".join(result.stderr.decode().split())
    assert result.returncode == 1 and "Traceback" not in text, text
    assert "is full" in text and "disk I/O error" not in text


from tests.integration.test_storage_faults import small_disk  # noqa: E402,F401  (the tmpfs fixture)
