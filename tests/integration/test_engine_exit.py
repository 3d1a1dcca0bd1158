"""`omoide say` on the embedded model ends cleanly however it ends (issue 33,
items 5 and 10): a full disk mid-reply exits 1 with its message instead of
aborting in llama.cpp (`FATAL: exception not rethrown`, SIGABRT), and SIGTERM
or SIGHUP removes the engine's socket folder from the temporary directory as
a normal exit does. Real subprocesses, the real engine."""

from __future__ import annotations

import os
import select
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.model
START_TIMEOUT = 240.0
"""Seconds the engine may take to load and start replying on a busy machine."""


def say(home: Path, temp: Path, message: str, max_tokens: int) -> subprocess.Popen[bytes]:
    env = {**os.environ, "OMOIDE_HOME": str(home), "TMPDIR": str(temp), "OMOIDE_DISCOVER_SERVERS": "[]",
           "OMOIDE_MAX_TOKENS": str(max_tokens)}
    for var in ("OMOIDE_BASE_URL", "OMOIDE_BACKEND", "OMOIDE_MODEL", "OMOIDE_CONFIG"):
        env.pop(var, None)
    # Under nohup (a CI script started with it) SIGHUP is ignored, and children inherit that;
    # omoide is to meet the signals a terminal sends, so its process starts with their defaults.
    return subprocess.Popen([sys.executable, "-m", "omoide.cli.app", "say", "suzune", message], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_DFL))


def first_output(proc: subprocess.Popen[bytes]) -> bytes:
    """The first bytes of the reply, once they arrive (within START_TIMEOUT)."""
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], START_TIMEOUT)
    assert ready, "no reply within the bound"
    return os.read(proc.stdout.fileno(), 1024)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_a_signal_mid_reply_removes_the_engine_folder(signum: signal.Signals, tmp_path: Path, smollm2_path: Path) -> None:
    temp = tmp_path / "tmp"
    temp.mkdir()
    proc = say(tmp_path / "home", temp, "Tell me a very long story about the sea, with every detail.", 2000)
    try:
        assert first_output(proc), proc.stderr.read() if proc.stderr else ""
        assert [p.name for p in temp.iterdir() if p.name.startswith("omoide-engine-")]
        proc.send_signal(signum)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 128 + signum, err.decode()
    assert f"Stopped by {signum.name}" in err.decode() and "Traceback" not in err.decode()
    assert list(temp.iterdir()) == []  # the socket folder went with the process, as on a normal exit


@pytest.fixture
def roomy_disk(tmp_path: Path) -> Iterator[Path]:
    """A real tmpfs of 4 MiB: room for the database, then filled up."""
    mountpoint = tmp_path / "disk"
    mountpoint.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mountpoint)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    yield mountpoint
    subprocess.run(["umount", "-l", str(mountpoint)], check=False)


def leave_free(disk: Path, room: int) -> None:
    """Fill `disk` until `room` bytes are left."""
    with open(disk / "filler", "wb") as filler:
        filler.write(b"\0" * max(0, shutil.disk_usage(disk).free - room))


def test_a_disk_that_fills_mid_reply_is_a_message_and_exit_1_not_an_abort(roomy_disk: Path, tmp_path: Path,
                                                                          smollm2_path: Path) -> None:
    home, temp = roomy_disk / "home", tmp_path / "tmp"
    temp.mkdir()
    first = say(home, temp, "Hello.", 40)
    _, err = first.communicate(timeout=START_TIMEOUT)
    assert first.returncode == 0, err.decode()
    leave_free(roomy_disk, 128 * 1024)  # your message fits; the reply does not
    second = say(home, temp, "Hello again.", 40)
    _, err = second.communicate(timeout=START_TIMEOUT)
    text = err.decode()
    assert "FATAL" not in text and second.returncode == 1, (second.returncode, text)
    assert "is full" in text and "Free some space and try again; nothing stored was lost." in text
    assert list(temp.iterdir()) == []
