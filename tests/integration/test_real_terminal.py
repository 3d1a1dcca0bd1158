"""omoide in a real terminal (tmux): escape sequences in stored text never act
on the terminal, and SIGTERM/SIGHUP during a reply restore it."""

from __future__ import annotations

import asyncio
import os
import shlex
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.faultserver import Reply
from tests.tmux import capture, tmux, until
from tests.integration.test_endless import NO_REPLY_CAP, endless
from tests.integration.test_hostile_text import seed

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")


class Pane:
    def __init__(self, name: str) -> None:
        self.name = name

    def text(self) -> str:
        return capture(self.name)

    def show(self, fmt: str) -> str:
        return tmux("display-message", "-p", "-t", self.name, fmt).strip()

    async def until(self, condition: Callable[[], bool], what: str, timeout: float = 60.0) -> None:
        await until(condition, what, self.name, timeout=timeout)

    def app_pid(self) -> int:
        shell = self.show("#{pane_pid}")
        children = subprocess.run(["pgrep", "-P", shell], capture_output=True, text=True).stdout.split()
        return int(children[0])


@pytest.fixture
def terminal(omoide_home: Path) -> Iterator[Callable[[list[str], dict[str, str]], Pane]]:
    names: list[str] = []

    def start(args: list[str], env: dict[str, str]) -> Pane:
        name = f"omoide-test-{uuid.uuid4().hex[:8]}"
        names.append(name)
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in {"OMOIDE_WELCOMED": "true", **env, "OMOIDE_HOME": str(omoide_home),
                                                                   "PYTHONPATH": os.environ.get("PYTHONPATH", "")}.items())
        command = f"env {exports} {shlex.quote(sys.executable)} -m omoide.cli.app {' '.join(map(shlex.quote, args))}; echo EXITED $?; sleep 600"
        for _ in range(20):  # a tmux server whose last session just closed may still be exiting
            if subprocess.run(["tmux", "new-session", "-d", "-s", name, "-x", "120", "-y", "40", command]).returncode == 0:
                break
            time.sleep(0.1)
        else:
            pytest.fail("tmux could not start a session")
        tmux("set-option", "-t", name, "set-clipboard", "on")  # so an OSC 52 write would land in a buffer
        return Pane(name)

    yield start
    for name in names:
        tmux("kill-session", "-t", name)


async def test_hostile_text_in_the_tui_does_not_act_on_the_terminal(omoide_home: Path, terminal) -> None:  # type: ignore[no-untyped-def]
    await seed(omoide_home)
    buffers_before = tmux("list-buffers")
    pane = terminal(["chat", "suzune"], {"TERM": "xterm-256color"})
    await pane.until(lambda: "matcha" in pane.text(), "the transcript painting")
    await asyncio.sleep(0.5)  # a title or clipboard write would have arrived with the paint
    assert "pwned" not in pane.show("#{pane_title}")
    assert tmux("list-buffers") == buffers_before  # no OSC 52 clipboard write
    assert "␛]52;c;" in pane.text()  # shown, inert
    tmux("send-keys", "-t", pane.name, "C-q")
    await pane.until(lambda: "EXITED 0" in pane.text(), "the app quitting")


@pytest.mark.parametrize("args", [["diary", "suzune"], ["export", "suzune", "-f", "md"], ["chats"]])
async def test_hostile_text_from_the_cli_does_not_act_on_the_terminal(omoide_home: Path, terminal, args: list[str]) -> None:  # type: ignore[no-untyped-def]
    await seed(omoide_home)
    buffers_before = tmux("list-buffers")
    pane = terminal(args, {"TERM": "xterm-256color"})
    await pane.until(lambda: "EXITED 0" in pane.text(), "the command finishing")
    assert "pwned" not in pane.show("#{pane_title}")
    assert tmux("list-buffers") == buffers_before
    assert "␛" in pane.text()


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
async def test_sigterm_or_sighup_mid_reply_restores_the_terminal_and_keeps_the_reply(
    omoide_home: Path, terminal, fault_server, signum: int  # type: ignore[no-untyped-def]
) -> None:
    def reply(request):  # type: ignore[no-untyped-def]
        return endless("wave ") if request.path.endswith("/chat/completions") else Reply(status=404, body=b"{}")

    fault_server.queue(*[reply] * 8)
    pane = terminal(["chat", "suzune"], {"TERM": "xterm-256color", "OMOIDE_BASE_URL": fault_server.base_url, "OMOIDE_MODEL": "m",
                                         **NO_REPLY_CAP})
    await pane.until(lambda: "Message Suzune" in pane.text(), "the composer appearing")
    assert pane.show("#{alternate_on}") == "1"
    tmux("send-keys", "-t", pane.name, "hello there", "Enter")
    await pane.until(lambda: "wave wave" in pane.text(), "the reply streaming")
    os.kill(pane.app_pid(), signum)
    await pane.until(lambda: "EXITED" in pane.text(), "the app exiting")
    assert f"EXITED {128 + signum}" in pane.text()
    assert pane.show("#{alternate_on} #{mouse_any_flag} #{mouse_button_flag} #{mouse_all_flag} #{mouse_sgr_flag}") == "0 0 0 0 0"
    row = sqlite3.connect(omoide_home / "data" / "omoide.db").execute(
        "SELECT status, content FROM messages WHERE role = 'assistant' ORDER BY id DESC LIMIT 1").fetchone()
    assert row[0] == "interrupted" and row[1].startswith("wave wave")
