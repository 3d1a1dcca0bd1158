"""Hostile input, third round (issue 33), through the commands a user runs in a
subprocess: special files handed to an import (a device, a FIFO), file and
folder modes under the usual umask, full disks, misleading download messages,
and the exit status of an import that imported nothing."""

from __future__ import annotations

import json
import os
import re
import resource
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.fakeservers import address, http_server
from tests.integration.test_storage_faults import small_disk  # noqa: F401  (the tmpfs fixture)
from tests.integration.test_tavern_files import card_file, settings_json

MEMORY_CAP = 2 * 1024**3
"""The address space a child may use: reading /dev/zero without bound hits it in seconds."""


def _child_limits() -> None:
    os.umask(0o022)  # the usual one: what omoide writes must be private whatever it is
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def omoide(*args: str, home: Path, env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    environ = {**os.environ, "OMOIDE_HOME": str(home), "OMOIDE_DISCOVER_SERVERS": "[]", **(env or {})}
    return subprocess.run([sys.executable, "-m", "omoide.cli.app", *args], capture_output=True, text=True, env=environ,
                          timeout=timeout, preexec_fn=_child_limits)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def no_traceback(result: subprocess.CompletedProcess[str]) -> str:
    text = result.stdout + result.stderr
    assert "Traceback" not in text and "Logging error" not in text, text
    return " ".join(text.split())


# -- 1 and 2: devices and FIFOs handed to `characters import` -------------------------------------


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_a_link_to_an_endless_device_is_refused_not_read(device: str, tmp_path: Path) -> None:
    """Named on the command line and inside a folder: the device reports size 0,
    so the 20 MiB limit let it through and it was read until memory ran out."""
    link = tmp_path / "card.json"
    link.symlink_to(device)
    folder = tmp_path / "cards"
    folder.mkdir()
    (folder / "card.png").symlink_to(device)
    card_file(folder, "Mika")
    named = omoide("characters", "import", str(link), home=tmp_path / "home")
    assert named.returncode == 1
    assert f"Cannot read the card {link}: it is a device, not a file." in no_traceback(named)
    inside = omoide("characters", "import", str(folder), home=tmp_path / "home")
    text = no_traceback(inside)
    assert inside.returncode == 1 and "card.png: not a regular file" in text
    assert "Imported 1 of 1 card(s); refused 1 file(s)." in text
    assert (tmp_path / "home" / "data" / "characters" / "mika" / "character.toml").is_file()


def test_a_fifo_in_an_imported_folder_is_skipped_and_the_rest_imported(tmp_path: Path) -> None:
    """A FIFO named x.json hung the import forever (opening it waits for a writer)."""
    folder = tmp_path / "cards"
    folder.mkdir()
    card_file(folder, "Anna")
    os.mkfifo(folder / "x.json")
    card_file(folder, "Zora")
    result = omoide("characters", "import", str(folder), home=tmp_path / "home", timeout=90)
    text = no_traceback(result)
    assert result.returncode == 1 and "x.json: not a regular file (a device, FIFO, socket or broken link): skipped" in text
    assert "Imported 2 of 2 card(s)" in text
    named = omoide("characters", "import", str(folder / "x.json"), home=tmp_path / "home", timeout=90)
    assert named.returncode == 1 and "it is a FIFO (named pipe), not a file" in no_traceback(named)


def test_lorebooks_chats_and_personas_refuse_a_device_too(tmp_path: Path) -> None:
    zero = tmp_path / "zero.json"
    zero.symlink_to("/dev/zero")
    home = tmp_path / "home"
    lore = omoide("characters", "lore", str(zero), home=home)
    assert lore.returncode == 1 and "Cannot read the lorebook" in no_traceback(lore) and "it is a device, not a file" in lore.stderr
    chat = omoide("import-chat", str(zero), "--character", "suzune", home=home)
    assert chat.returncode == 1 and "it is a device, not a file" in no_traceback(chat)
    personas = omoide("personas", "import", str(zero), home=home)
    assert personas.returncode == 1 and "it is a device, not a file" in no_traceback(personas)
    config = omoide("personas", "list", home=home, env={"OMOIDE_CONFIG": str(zero)})
    assert config.returncode == 1
    assert f"Cannot read the config file {zero}: it is a device, not a file." in no_traceback(config)


# -- 4 and 7: what omoide writes is private -------------------------------------------------------


def test_imported_characters_personas_and_lorebooks_are_private_files(tmp_path: Path) -> None:
    home = tmp_path / "home"
    book = {"entries": [{"keys": ["harbour"], "content": "The harbour town of Kesh."}]}
    card = card_file(tmp_path, "Mika", description="A baker.", character_book=book)
    assert omoide("characters", "import", str(card), home=home).returncode == 0
    lorebook = tmp_path / "kesh.json"
    lorebook.write_text(json.dumps({"entries": {"0": {"key": ["Kesh"], "content": "A harbour town."}}}))
    assert omoide("characters", "lore", str(lorebook), home=home).returncode == 0
    assert omoide("personas", "import", str(settings_json(tmp_path)), home=home).returncode == 0
    written = [p for p in (home / "data").rglob("*") if p.suffix != ".db" and "omoide.db" not in p.name]
    files = [p for p in written if p.is_file()]
    assert {p.name for p in files} >= {"character.toml", "lorebook.toml", "card.json", "kesh.json", "persona.toml", "avatar.png"}
    assert {p: oct(mode(p)) for p in files if mode(p) != 0o600} == {}
    assert {p: oct(mode(p)) for p in written if p.is_dir() and mode(p) != 0o700} == {}


def test_a_pulled_model_its_part_and_its_folders_are_private(tmp_path: Path) -> None:
    home = tmp_path / "home"
    model = b"GGUF" + os.urandom(200_000)
    with http_server(file=model, drop_after=50_000) as server:
        cut = omoide("models", "pull", address(server) + "/tiny.gguf", home=home)
        assert cut.returncode == 1
        part = home / "data" / "models" / "tiny.gguf.part"
        assert part.stat().st_size == 50_000 and mode(part) == 0o600
        assert mode(home / "data") == 0o700 and mode(home / "data" / "models") == 0o700
        done = omoide("models", "pull", address(server) + "/tiny.gguf", home=home)
    assert done.returncode == 0, done.stderr
    assert mode(home / "data" / "models" / "tiny.gguf") == 0o600


def test_a_data_folder_left_open_by_an_earlier_version_is_made_private(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "data" / "characters").mkdir(parents=True)
    (home / "logs").mkdir()
    for folder in (home / "data", home / "logs"):
        os.chmod(folder, 0o755)
    assert omoide("characters", "list", home=home).returncode == 0
    assert mode(home / "data") == 0o700 and mode(home / "logs") == 0o700


def fill(path: Path) -> None:
    """Write zeros to `path` until its disk is full."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        for size in (65536, 4096, 1):
            try:
                while True:
                    os.write(fd, b"\0" * size)
            except OSError:
                continue
    finally:
        os.close(fd)


# -- 6: a log that cannot be written --------------------------------------------------------------


def test_doctor_on_a_full_disk_says_the_log_cannot_be_written_without_a_traceback(small_disk: Path) -> None:
    home = small_disk / "home"
    (home / "logs").mkdir(parents=True)
    (home / "logs" / "omoide.log").write_text("x" * 4095 + "\n")  # one whole page: the next line needs another
    fill(small_disk / "filler")
    result = omoide("doctor", home=home, env={"OMOIDE_BACKEND": "openai", "OMOIDE_BASE_URL": "http://127.0.0.1:9"})
    text = no_traceback(result)
    assert result.returncode == 1
    assert f"✗ log: {home / 'logs' / 'omoide.log'} cannot be written (No space left on device)" in text


# -- 11: download messages that say what happened -----------------------------------------------


class _Odd(BaseHTTPRequestHandler):
    """Redirects in a loop, redirects to file://, or drips a byte at a time."""

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
        if self.path.startswith("/loop"):
            self._redirect(f"/loop{len(self.path)}.gguf")
        elif self.path.startswith("/file"):
            self._redirect("file:///etc/passwd")
        else:
            self.send_response(200)
            self.send_header("content-length", "1000000")
            self.end_headers()
            try:
                self.wfile.write(b"GGUF")
                while not self.server.stopping.is_set():  # type: ignore[attr-defined]
                    self.wfile.write(b"\0")
                    self.wfile.flush()
                    self.server.stopping.wait(0.05)  # type: ignore[attr-defined]
            except OSError:
                pass

    def _redirect(self, where: str) -> None:
        self.send_response(302)
        self.send_header("location", where)
        self.send_header("content-length", "0")
        self.end_headers()


@contextmanager
def odd_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Odd)
    server.daemon_threads = True
    server.stopping = threading.Event()  # type: ignore[attr-defined]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.stopping.set()  # type: ignore[attr-defined]
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize(("path", "said"), [("/loop.gguf", "redirects in a loop"), ("/file.gguf", "redirects to a file:// address")])
def test_a_redirect_that_cannot_succeed_does_not_offer_to_resume(path: str, said: str, tmp_path: Path) -> None:
    with odd_server() as url:
        result = omoide("models", "pull", url + path, home=tmp_path / "home")
    text = no_traceback(result)
    assert result.returncode == 1 and said in text and "Trying again will not help" in text
    assert "interrupted" not in text and "resumes" not in text


def test_a_pull_onto_a_tiny_disk_says_the_real_sizes(small_disk: Path) -> None:
    with http_server(file=b"GGUF", unsized=True, endless=True) as server:
        result = omoide("models", "pull", address(server) + "/endless.gguf", home=small_disk / "home")
    text = no_traceback(result)
    assert result.returncode == 1 and "more than 0 MiB" not in text
    assert re.search(r"has (1\.0 MiB|\d+ KiB) free, of which omoide keeps 512 MiB free: it sent more than the 0 KiB that leaves", text), text


def test_a_dripping_download_stops_at_its_deadline_and_keeps_what_arrived(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with odd_server() as url:
        result = omoide("models", "pull", url + "/drip.gguf", home=home, env={"OMOIDE_PULL_DEADLINE": "3"})
    text = no_traceback(result)
    assert result.returncode == 1 and "did not finish within 3 second(s)" in text and "pull_deadline" in text
    assert (home / "data" / "models" / "drip.gguf.part").stat().st_size >= 4


# -- 15: an import that imported nothing ------------------------------------------------------------


def test_a_personas_import_that_refuses_every_persona_exits_1(tmp_path: Path) -> None:
    home = tmp_path / "home"
    path = settings_json(tmp_path)
    assert omoide("personas", "import", str(path), home=home).returncode == 0
    again = omoide("personas", "import", str(path), home=home)
    assert "a persona of that name already exists" in no_traceback(again)
    assert again.returncode == 1
    empty = tmp_path / "empty.json"
    empty.write_text(json.dumps({"power_user": {"personas": {}}}))
    nothing = omoide("personas", "import", str(empty), home=home)
    assert nothing.returncode == 1 and "There were no personas in it." in nothing.stdout
