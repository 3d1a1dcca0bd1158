"""Closing the terminal under a running `omoide chat` (tmux kills the session:
the pty hangs up and the app gets SIGHUP), idle or mid-reply: the process
ends, and what streamed is kept, marked interrupted. SIGTERM ends it idle too."""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
from pathlib import Path

import pytest

from tests.faultserver import Reply
from tests.integration.test_endless import NO_REPLY_CAP, endless
from tests.integration.test_real_terminal import terminal  # noqa: F401 - `terminal` is a fixture
from tests.tmux import tmux

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads process states from /proc")


def running(pid: int) -> bool:
    """The process exists and is not a zombie waiting to be reaped."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"


async def ended(pid: int, timeout: float = 60.0) -> bool:
    for _ in range(int(timeout / 0.1)):
        if not running(pid):
            return True
        await asyncio.sleep(0.1)
    return False


def last_reply(home: Path) -> tuple[str, str]:
    row = sqlite3.connect(home / "data" / "omoide.db").execute(
        "SELECT status, content FROM messages WHERE role = 'assistant' ORDER BY id DESC LIMIT 1").fetchone()
    return row[0], row[1]


async def chat_on_an_endless_server(terminal, fault_server):  # type: ignore[no-untyped-def]
    """omoide chat in tmux against a server whose replies never end; returns the pane once the composer shows."""
    def reply(request):  # type: ignore[no-untyped-def]
        return endless("wave ") if request.path.endswith("/chat/completions") else Reply(status=404, body=b"{}")

    fault_server.queue(*[reply] * 8)
    pane = terminal(["chat", "suzune"], {"TERM": "xterm-256color", "OMOIDE_BASE_URL": fault_server.base_url, "OMOIDE_MODEL": "m",
                                         **NO_REPLY_CAP})
    await pane.until(lambda: "Message Suzune" in pane.text(), "the composer appearing")
    return pane


@pytest.mark.parametrize("streaming", [True, False], ids=["mid-reply", "idle"])
async def test_closing_the_terminal_ends_omoide_chat_and_keeps_what_streamed(
    omoide_home: Path, terminal, fault_server, streaming: bool  # type: ignore[no-untyped-def]
) -> None:
    pane = await chat_on_an_endless_server(terminal, fault_server)
    pid = pane.app_pid()
    if streaming:
        tmux("send-keys", "-t", pane.name, "hello there", "Enter")
        # A screenful of reply: it has been repainting for a while, as a real reply does when the window closes.
        await pane.until(lambda: pane.text().count("wave") >= 250, "the reply filling the screen")
    tmux("kill-session", "-t", pane.name)
    if not await ended(pid):
        os.kill(pid, signal.SIGKILL)
        pytest.fail("omoide chat was still running a minute after its terminal closed")
    if streaming:
        status, content = last_reply(omoide_home)
        assert status == "interrupted" and content.startswith("wave wave")


async def test_sigterm_ends_an_idle_chat_and_restores_the_terminal(omoide_home: Path, terminal) -> None:  # type: ignore[no-untyped-def]
    pane = terminal(["chat", "suzune"], {"TERM": "xterm-256color", "OMOIDE_BASE_URL": "http://127.0.0.1:9/v1", "OMOIDE_MODEL": "m"})
    await pane.until(lambda: "Message Suzune" in pane.text(), "the composer appearing")
    os.kill(pane.app_pid(), signal.SIGTERM)
    await pane.until(lambda: "EXITED" in pane.text(), "the app exiting")
    assert "EXITED 143" in pane.text()
    assert pane.show("#{alternate_on} #{mouse_any_flag} #{mouse_sgr_flag}") == "0 0 0"


async def test_sigterm_ends_a_chat_mid_reply_and_keeps_what_streamed(omoide_home: Path, terminal, fault_server) -> None:  # type: ignore[no-untyped-def]
    """Issue 25 case 9 asks that SIGTERM always work: mid-reply too, not only idle."""
    pane = await chat_on_an_endless_server(terminal, fault_server)
    pid = pane.app_pid()
    tmux("send-keys", "-t", pane.name, "hello there", "Enter")
    await pane.until(lambda: pane.text().count("wave") >= 50, "the reply streaming")
    os.kill(pid, signal.SIGTERM)
    if not await ended(pid, timeout=30):
        os.kill(pid, signal.SIGKILL)
        pytest.fail("omoide chat was still running 30 s after SIGTERM mid-reply")
    status, content = last_reply(omoide_home)
    assert status == "interrupted" and content.startswith("wave wave")
