"""Storage under stress: two processes at once, a full disk, a read-only directory."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from omoide.domain.chat import Role
from omoide.errors import StorageUnavailable
from omoide.store import Store

WRITER = textwrap.dedent(
    """
    import asyncio, sys
    from pathlib import Path
    from omoide.domain.chat import Role
    from omoide.store import Store

    async def main(path, tag, n):
        store = await Store.open(Path(path))
        chat = await store.chats.create(tag, greeting="hi")
        head = chat.head_id
        for i in range(n):
            head = (await store.messages.add(chat.id, head, Role.USER, f"{tag} {i}")).id
            await store.messages.search(tag)
        await store.close()

    asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
    """
)


def test_two_processes_write_to_one_database_without_locking_errors(tmp_path: Path) -> None:
    db = tmp_path / "omoide.db"
    asyncio.run(_init(db))
    procs = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(db), tag, "150"], stderr=subprocess.PIPE, text=True)
        for tag in ("tui", "script")
    ]
    errors = [p.communicate(timeout=120)[1] for p in procs]
    assert all(p.returncode == 0 for p in procs), errors
    assert not any("locked" in e for e in errors)
    raw = sqlite3.connect(db)
    counts = dict(raw.execute("SELECT c.character, count(*) FROM messages m JOIN chats c ON c.id = m.chat_id GROUP BY c.character"))
    assert raw.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    raw.close()
    assert counts == {"tui": 151, "script": 151}


async def _init(db: Path) -> None:
    store = await Store.open(db)
    await store.close()


async def test_a_full_disk_gives_a_clear_error_and_loses_nothing(tmp_path: Path) -> None:
    store = await Store.open(tmp_path / "omoide.db")
    chat = await store.chats.create("wren", greeting="Ahoy")
    kept = await store.messages.add(chat.id, chat.head_id, Role.USER, "keep me")
    pages = (await store.db.one("PRAGMA page_count"))[0]
    await store.db.conn.execute(f"PRAGMA max_page_count = {pages + 2}")  # SQLite's own 'disk full'
    with pytest.raises(StorageUnavailable) as info:
        head = kept.id
        for _ in range(200):
            head = (await store.messages.add(chat.id, head, Role.USER, "x" * 4000)).id
    assert "full" in info.value.message and info.value.hint
    await store.close()
    store = await Store.open(tmp_path / "omoide.db")
    assert (await store.messages.get(kept.id)).content == "keep me"
    assert (await store.db.one("PRAGMA integrity_check"))[0] == "ok"
    await store.close()


@pytest.fixture
def small_disk(tmp_path: Path):
    """A real, tiny file system (tmpfs) that can be filled up or made read-only."""
    mountpoint = tmp_path / "disk"
    mountpoint.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mountpoint)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    yield mountpoint
    subprocess.run(["umount", "-l", str(mountpoint)], check=False)


async def test_a_really_full_disk_gives_a_clear_error_and_loses_nothing(small_disk: Path) -> None:
    store = await Store.open(small_disk / "omoide.db")
    chat = await store.chats.create("wren", greeting="Ahoy")
    kept = await store.messages.add(chat.id, chat.head_id, Role.USER, "keep me")
    with pytest.raises(StorageUnavailable) as info:
        head = kept.id
        for _ in range(2000):
            head = (await store.messages.add(chat.id, head, Role.USER, os.urandom(2000).hex())).id
    assert "full" in info.value.message
    await store.close()
    for leftover in small_disk.glob("*.big"):
        leftover.unlink()
    store = await Store.open(small_disk / "omoide.db")
    assert (await store.messages.get(kept.id)).content == "keep me"
    await store.close()


def test_a_read_only_data_directory_gives_a_clear_error(small_disk: Path) -> None:
    home = small_disk / "home"
    asyncio.run(_seed(home))
    before = (home / "data" / "omoide.db").read_bytes()
    subprocess.run(["mount", "-o", "remount,ro", str(small_disk)], check=True)
    env = {**os.environ, "OMOIDE_HOME": str(home)}
    # Reading needs no write: the chats are listed (the library index, a cache, is left as it was).
    listed = subprocess.run([sys.executable, "-m", "omoide.cli.app", "chats"], env=env, capture_output=True, text=True, timeout=60)
    assert listed.returncode == 0 and "wren" in listed.stdout and "Traceback" not in listed.stderr, listed.stdout + listed.stderr
    # Writing says what is wrong and what to do.
    result = subprocess.run([sys.executable, "-m", "omoide.cli.app", "pins", "wren", "--add", "Kai hates dill."], env=env,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "cannot be written" in result.stderr and "Traceback" not in result.stderr
    assert (home / "data" / "omoide.db").read_bytes() == before


async def _seed(home: Path) -> None:
    store = await Store.open(home / "data" / "omoide.db")
    chat = await store.chats.create("wren", greeting="Ahoy")
    await store.messages.add(chat.id, chat.head_id, Role.USER, "precious")
    await store.close()


async def test_the_tui_and_omoide_say_share_a_data_directory(tmp_path: Path, fault_server) -> None:  # type: ignore[no-untyped-def]
    """A chat open in the TUI while a script runs `omoide say` against the same
    data directory: both work, and neither sees 'database is locked'."""
    from omoide.characters.library import find_character
    from omoide.config.settings import Settings
    from omoide.chat.session import ChatSession
    from omoide.tui.app import OmoideApp
    from tests.faultserver import Reply, stream_reply
    from tests.scripted import ScriptedBackend

    def reply(request):  # type: ignore[no-untyped-def]
        return Reply(status=404, body=b"{}") if "tokenize" in request.path else stream_reply("From ", "the ", "script.")

    fault_server.queue(*[reply] * 40)
    home = Path(os.environ["OMOIDE_HOME"])
    store = await Store.open(home / "data" / "omoide.db")
    settings = Settings(user_name="Kai")
    session = await ChatSession.open(store, find_character("wren"), settings, ScriptedBackend(default=lambda m: ["From the TUI."], delay=0.01))
    app = OmoideApp(session)
    env = {**os.environ, "OMOIDE_BASE_URL": fault_server.base_url, "OMOIDE_MODEL": "m"}
    async with app.run_test(size=(100, 30)) as pilot:
        scripts = [
            await asyncio.create_subprocess_exec(sys.executable, "-m", "omoide.cli.app", "say", "wren", f"script {i}", env=env,
                                                 stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
            for i in range(3)
        ]
        for i in range(5):
            app.query_one("#input").value = f"tui {i}"
            await pilot.press("enter")
            for _ in range(100):
                await pilot.pause(0.02)
                if not app.turn_running:
                    break
        results = [await asyncio.wait_for(p.communicate(), 60) for p in scripts]
    for (out, err), proc in zip(results, scripts, strict=True):
        assert proc.returncode == 0, err.decode()
        assert "locked" not in err.decode() and "From the script." in out.decode()
    contents = [row[0] for row in await store.db.all("SELECT content FROM messages")]
    await store.close()
    assert sum(c.startswith("tui ") for c in contents) == 5 and contents.count("From the TUI.") == 5
    assert sum(c.startswith("script ") for c in contents) == 3 and contents.count("From the script.") == 3
