"""`/copy` in a real terminal (tmux): the last reply reaches tmux's paste buffer
through OSC 52, as it would reach the clipboard of a terminal over SSH; F2 makes
the app stop asking for mouse events (tmux's own flags say so) and F2 again
asks for them again.

The test runs its own tmux server (a socket of its own), so `set-clipboard on`
changes no one else's tmux."""

from __future__ import annotations

import shlex
import shutil
import sqlite3
import subprocess
import sys
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.fakeservers import address, chat_reply, http_server
from tests.tmux import tmux as run_tmux, until as wait_until

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")
OMOIDE = Path(sys.executable).with_name("omoide")
REPLY = "*Suzune wipes the counter.* Two matcha lattes,\nno sugar. Coming up."


def last_reply(home: Path) -> str | None:
    db = home / "data" / "omoide.db"
    if not db.exists():
        return None
    try:
        with sqlite3.connect(db) as conn:
            row = conn.execute("SELECT content FROM messages WHERE role = 'assistant' ORDER BY id DESC LIMIT 1").fetchone()
    except sqlite3.OperationalError:
        return None
    return row[0] if row else None


async def test_copy_reaches_tmux_paste_buffer_through_osc52_and_f2_releases_the_mouse(omoide_home: Path) -> None:
    socket = f"omoide-copy-{uuid.uuid4().hex[:8]}"

    def tmux(*args: str) -> str:
        return run_tmux(*args, server=socket)

    async def until(condition: Callable[[], bool], what: str) -> None:
        await wait_until(condition, what, "copy", server=socket)

    with http_server({"POST /v1/chat/completions": chat_reply(REPLY)}) as server:
        env = {"OMOIDE_HOME": str(omoide_home), "OMOIDE_BASE_URL": address(server) + "/v1", "OMOIDE_MODEL": "m",
               "OMOIDE_DISCOVER_SERVERS": "[]", "OMOIDE_WELCOMED": "true", "TERM": "xterm-256color"}
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
        command = f"env {exports} {shlex.quote(str(OMOIDE))} chat suzune; sleep 600"
        assert subprocess.run(["tmux", "-L", socket, "-f", "/dev/null", "new-session", "-d", "-s", "copy",
                               "-x", "100", "-y", "30", command]).returncode == 0
        try:
            tmux("set", "-g", "set-clipboard", "on")
            await until(lambda: "Message Suzune" in tmux("capture-pane", "-p", "-t", "copy"), "the chat showing")
            tmux("send-keys", "-t", "copy", "Two lattes please", "Enter")
            await until(lambda: last_reply(omoide_home) not in (None, "") and "Coming up." in tmux("capture-pane", "-p", "-t", "copy"),
                        "the reply showing")
            stored = last_reply(omoide_home)
            assert stored is not None and "Coming up." in stored
            tmux("send-keys", "-t", "copy", "/copy", "Enter")
            await until(lambda: tmux("show-buffer") == stored, "the reply reaching the paste buffer")
            await until(lambda: "Copied the last reply" in tmux("capture-pane", "-p", "-t", "copy"), "the notice")

            # F2: the terminal is told to stop sending mouse events, so its own selection works.
            mouse = "#{mouse_any_flag} #{mouse_button_flag} #{mouse_sgr_flag}"
            assert tmux("display", "-p", "-t", "copy", mouse).strip() == "1 0 1"
            tmux("send-keys", "-t", "copy", "F2")
            await until(lambda: tmux("display", "-p", "-t", "copy", mouse).strip() == "0 0 0", "the mouse being released")
            await until(lambda: "mouse off: select with the terminal" in tmux("capture-pane", "-p", "-t", "copy"), "the status line")
            tmux("send-keys", "-t", "copy", "F2")
            await until(lambda: tmux("display", "-p", "-t", "copy", mouse).strip() == "1 0 1", "the mouse taken back")
        finally:
            tmux("kill-server")
