"""Downloads are bounded (issue 25, cases 5 and 6), against fake servers on a
loopback port: a file of unannounced size is capped with a clear message, a
resume answered from the wrong byte starts over instead of corrupting the
file, and a full disk is a message, never a traceback; the .part is kept or
removed on purpose."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from omoide.errors import DownloadFailed
from omoide.models.catalog import models_dir
from omoide.models.pull import pull
from tests.fakeservers import address, http_server
from tests.integration.test_storage_faults import small_disk  # noqa: F401  (the tmpfs fixture)

MODEL = b"GGUF" + os.urandom(300_000)
SHA = hashlib.sha256(MODEL).hexdigest()


def omoide(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "OMOIDE_HOME": str(home)}
    return subprocess.run([sys.executable, "-m", "omoide.cli.app", *args], capture_output=True, text=True, env=env, timeout=120)


def test_an_endless_download_of_unannounced_size_stops_with_a_message_and_leaves_nothing(small_disk: Path) -> None:
    """Case 5, through the CLI: the server sends no Content-Length and never ends;
    the disk does not fill, nothing is left behind, and there is no traceback."""
    with http_server(file=b"GGUF", unsized=True, endless=True) as server:
        result = omoide("models", "pull", address(server) + "/endless.gguf", home=small_disk / "home")
    assert result.returncode == 1
    assert "did not say how big" in result.stderr and "Traceback" not in result.stderr + result.stdout
    assert not list((small_disk / "home").rglob("*.part")) and not list((small_disk / "home").rglob("*.gguf"))


async def test_a_download_of_unannounced_size_is_capped_and_the_part_removed() -> None:
    with http_server(file=MODEL, unsized=True, endless=True) as server:
        with pytest.raises(DownloadFailed) as info:
            await pull(address(server) + "/big.gguf", limit=1_000_000)
    assert "did not say how big" in info.value.message and "977 KiB" in info.value.message  # 1,000,000 bytes, said as they are
    assert not (models_dir() / "big.gguf.part").exists()


async def test_a_download_of_unannounced_size_within_the_cap_is_kept() -> None:
    with http_server(file=MODEL, unsized=True) as server:
        path = await pull(address(server) + "/small.gguf", sha256=SHA)
    assert path.read_bytes() == MODEL


async def test_a_resume_answered_from_byte_zero_starts_over_instead_of_appending() -> None:
    """Case 6: 206 with `Content-Range: bytes 0-…` to a resume from 100,000 was
    appended to the .part, and a corrupt model saved as complete."""
    models_dir().mkdir(parents=True)
    (models_dir() / "tiny.gguf.part").write_bytes(MODEL[:100_000])
    with http_server(file=MODEL, range_from_zero=True) as server:
        path = await pull(address(server) + "/tiny.gguf")
        asked = [r.get("range") for r in server.requests]
    assert asked == ["bytes=100000-", None]  # the mismatch was noticed, then the file fetched whole
    assert path.read_bytes() == MODEL
    assert hashlib.sha256(path.read_bytes()).hexdigest() == SHA


async def test_a_full_disk_is_a_message(small_disk: Path) -> None:
    with http_server(file=MODEL, unsized=True, endless=True) as server:
        with pytest.raises(DownloadFailed) as info:
            await pull(address(server) + "/fills.gguf", dest_dir=small_disk, limit=10**9)
    assert "The disk is full" in info.value.message and "Free some space" in info.value.hint
    assert not list(small_disk.glob("*.part"))  # unknown size: nothing to resume towards


async def test_an_interrupted_download_keeps_its_part_on_purpose() -> None:
    with http_server(file=MODEL, drop_after=50_000) as server:
        with pytest.raises(DownloadFailed) as info:
            await pull(address(server) + "/cut.gguf")
    assert "resumes where it stopped" in info.value.hint
    assert (models_dir() / "cut.gguf.part").stat().st_size == 50_000


def test_a_resume_answered_from_byte_zero_through_the_cli_saves_the_file_whole(omoide_home: Path) -> None:
    """Case 6 as a user meets it: `omoide models pull` with a .part from an earlier try,
    against a server that answers the resume with 206 and the file from byte 0."""
    folder = omoide_home / "data" / "models"
    folder.mkdir(parents=True)
    (folder / "tiny.gguf.part").write_bytes(MODEL[:100_000])
    with http_server(file=MODEL, range_from_zero=True) as server:
        result = omoide("models", "pull", address(server) + "/tiny.gguf", "--sha256", SHA, home=omoide_home)
        asked = [r.get("range") for r in server.requests]
    assert result.returncode == 0, result.stderr
    assert asked == ["bytes=100000-", None]
    assert (folder / "tiny.gguf").read_bytes() == MODEL and not (folder / "tiny.gguf.part").exists()
