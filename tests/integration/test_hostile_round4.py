"""Hostile input, fourth round (issue 43), through the commands a user runs in
a subprocess: a model_path that is not a model file, a keymap that names no
key, a damaged write-ahead log."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest


def omoide(*args: str, home: Path, env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    environ = {**os.environ, "OMOIDE_HOME": str(home), "OMOIDE_DISCOVER_SERVERS": "[]", **(env or {})}
    return subprocess.run([sys.executable, "-m", "omoide.cli.app", *args], capture_output=True, text=True, env=environ,
                          timeout=timeout)


def said(result: subprocess.CompletedProcess[str]) -> str:
    text = result.stdout + result.stderr
    assert "Traceback" not in text, text
    return " ".join(text.split())


# -- 12: model_path that is a FIFO, a link to /dev/zero, a folder ------------------------------------


@pytest.mark.parametrize(("kind", "expected"), [
    ("fifo", "is a FIFO (named pipe), not a model file."),
    ("zero", "is a link to /dev/zero, which is a device, not a model file."),
    ("folder", "is a folder, not a model file."),
    ("missing", "does not exist."),
])
def test_a_model_path_that_is_not_a_model_file_says_what_it_is(kind: str, expected: str, tmp_path: Path) -> None:
    path = tmp_path / f"model-{kind}"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "zero":
        path.symlink_to("/dev/zero")
    elif kind == "folder":
        path.mkdir()
    env = {"OMOIDE_BACKEND": "local", "OMOIDE_MODEL_PATH": str(path)}
    doctor = omoide("doctor", home=tmp_path / "home", env=env)
    assert doctor.returncode == 1 and f"✗ backend: The model file {path} {expected}" in said(doctor)
    say = omoide("say", "suzune", "hello", home=tmp_path / "home", env=env)
    assert say.returncode == 1 and f"The model file {path} {expected}" in said(say)
    assert "Fix model_path in the config" in said(say)


# -- 6 and 7: 2,000 pins and 3,000 corrections ----------------------------------------------------


def crowd(home: Path, pins: int, corrections: int) -> None:
    """Suzune with `pins` pins, and a chat with her holding `corrections` correcting lines of yours."""
    import asyncio

    from omoide.domain.chat import PinSource, Role
    from omoide.store import Store

    async def make() -> None:
        store = await Store.open(home / "data" / "omoide.db")
        try:
            for i in range(pins):
                await store.pins.add("suzune", f"Fact {i}: the lantern by door {i} is painted a colour of its own, "
                                     f"not the one beside it.", PinSource.TYPED)
            chat = await store.chats.create("suzune", greeting="Welcome back.")
            head = chat.head_id
            for i in range(corrections):
                head = (await store.messages.add(chat.id, head, Role.USER, f"Actually my cat is Mochi{i} now, not Biscuit{i}.")).id
                head = (await store.messages.add(chat.id, head, Role.ASSISTANT, "Noted.")).id
        finally:
            await store.close()

    asyncio.run(make())


def test_2000_pins_and_3000_corrections_keep_a_request_within_the_context(tmp_path: Path) -> None:
    import json

    from tests.fakeservers import address, chat_reply, http_server

    home = tmp_path / "home"
    (home / "data").mkdir(parents=True)
    crowd(home, 2000, 3000)
    context = 8192
    with http_server({"POST /v1/chat/completions": chat_reply("Mm.")}) as server:
        env = {"OMOIDE_BASE_URL": address(server) + "/v1", "OMOIDE_MODEL": "m", "OMOIDE_CONTEXT_SIZE": str(context)}
        say = omoide("say", "suzune", "What is my cat called?", home=home, env=env, timeout=300)
        text = said(say)
        assert say.returncode == 0, text
        request = json.loads(next(r["body"] for r in server.requests
                                  if r.get("path") == "/v1/chat/completions" and "What is my cat called?" in r["body"]))
    chars = sum(len(str(m.get("content", ""))) for m in request["messages"])
    assert chars / 4 <= context - 400, f"{chars:,} characters sent at a {context:,}-token context"
    system = str(request["messages"][0]["content"])
    assert "Fact 1999:" in system and "Fact 0:" not in system  # the newest pins are sent
    assert "Mochi2999" in "".join(str(m["content"]) for m in request["messages"])  # so is the newest correction
    assert "of the 2,000 pins for Suzune are not sent, the oldest" in text
    assert "of your 3,000 corrections in this chat are not sent, the oldest" in text
    assert "does not fit" not in text  # the card is whole
    listed = omoide("pins", "suzune", home=home)
    shown = " ".join(listed.stdout.split())
    assert shown.startswith(f"{2000 - len(re.findall('Fact', system)):,} of the 2,000 pins are not sent, the oldest (marked)")
    assert re.search(r"#1 Fact 0:[^#]*, not sent\)", shown) and re.search(r"Fact 1999:[^#]*\d\)$", shown)


# -- 10 and 11: the keymap in doctor --------------------------------------------------------------


def test_doctor_names_an_unknown_keymap_id_and_an_escape_in_a_key_and_is_not_all_good(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "config").mkdir(parents=True)
    config = home / "config" / "config.toml"
    config.write_text('[ui.keymap]\n"chat.nonsense" = "f9"\n"no.such.id" = "f8"\n"chat.diary" = "\\u001b]0;PWNED\\u0007"\n')
    doctor = omoide("doctor", home=home, env={"OMOIDE_CONFIG": str(config)})
    text = said(doctor)
    assert doctor.returncode == 1 and "All good" not in text
    assert "✗ keymap: [ui.keymap] 'chat.nonsense' is not a key of omoide; it is ignored." in text
    assert "✗ keymap: [ui.keymap] 'no.such.id' is not a key of omoide" in text
    assert "'chat.diary': the key holds control characters" in text
    assert "\x1b" not in doctor.stdout + doctor.stderr and "\x07" not in doctor.stdout + doctor.stderr


# -- 13: a damaged write-ahead log ----------------------------------------------------------------

LEAVE_A_WAL = """
import asyncio, os, sys
from pathlib import Path
from omoide.domain.chat import Role
from omoide.store import Store

async def main(path):
    store = await Store.open(Path(path))
    chat = await store.chats.create("suzune", greeting="Welcome back.")
    head = chat.head_id
    for i in range(40):
        head = (await store.messages.add(chat.id, head, Role.USER, f"line {i} " + "x" * 600)).id
    os._exit(0)  # as a kill -9 would: the log is never checkpointed

asyncio.run(main(sys.argv[1]))
"""


def test_a_damaged_wal_is_said_at_open_and_in_doctor_and_kept(tmp_path: Path) -> None:
    import sqlite3
    import struct

    home = tmp_path / "home"
    db = home / "data" / "omoide.db"
    assert omoide("chats", home=home).returncode == 0  # the database exists
    subprocess.run([sys.executable, "-c", LEAVE_A_WAL, str(db)], check=True, timeout=120)
    wal = db.with_name("omoide.db-wal")
    data = bytearray(wal.read_bytes())
    page = struct.unpack(">I", data[8:12])[0]
    frames = (len(data) - 32) // (24 + page)
    assert frames > 20
    middle = 32 + (frames // 2) * (24 + page) + 24 + 100
    data[middle] ^= 0xFF  # one byte of one page in the middle of the log
    wal.write_bytes(bytes(data))

    chats = omoide("chats", home=home)
    text = said(chats)
    assert chats.returncode == 0
    assert f"The database's write-ahead log was damaged: SQLite could read {frames // 2:,} of its {frames:,} frames" in text
    kept = list(db.parent.glob("omoide.db-wal.damaged-*"))
    assert len(kept) == 1 and kept[0].read_bytes() == bytes(data) and (kept[0].stat().st_mode & 0o777) == 0o600
    doctor = omoide("doctor", home=home)
    text = said(doctor)
    assert doctor.returncode == 1 and "All good" not in text and "✓ database" not in text
    assert f"✗ database: The database's write-ahead log was found damaged: SQLite could read {frames // 2:,} of its {frames:,}" in text
    assert str(kept[0]) in text
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"  # SQLite itself sees nothing wrong


# -- 4: portraits of 40 megapixels ----------------------------------------------------------------


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc")
def test_opening_the_picker_over_huge_portraits_stays_small() -> None:
    """Each 40-megapixel decode peaked near 500 MB and twelve left 1.4-2.8 GB resident."""
    script = Path(__file__).resolve().parents[2] / "benchmarks" / "portraits.py"
    result = subprocess.run([sys.executable, str(script), "--count", "3", "--max-mib", "300"], capture_output=True,
                            text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    after = int(re.search(r"(\d+) MiB after", result.stdout).group(1))  # type: ignore[union-attr]
    assert after < 150, result.stdout
