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
