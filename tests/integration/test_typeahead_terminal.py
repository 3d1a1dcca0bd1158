"""Keys typed while `omoide chat` starts, in a real terminal (tmux): typed before
the first paint, a whole message and its Enter reach the composer in order and
are sent, and what follows the Enter waits in the composer."""

from __future__ import annotations

import shlex
import shutil
import sqlite3
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from tests.fakeservers import address, chat_reply, http_server
from tests.tmux import capture, tmux, until

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")
OMOIDE = Path(sys.executable).with_name("omoide")  # the console script: the real launcher


def user_messages(home: Path) -> list[str]:
    db = home / "data" / "omoide.db"
    if not db.exists():
        return []
    try:
        with sqlite3.connect(db) as conn:
            return [r[0] for r in conn.execute("SELECT content FROM messages WHERE role = 'user' ORDER BY id")]
    except sqlite3.OperationalError:  # the schema is still being made
        return []


async def test_a_message_typed_before_the_first_paint_is_sent(omoide_home: Path) -> None:
    assert OMOIDE.exists(), OMOIDE
    with http_server({"POST /v1/chat/completions": chat_reply("*Suzune nods.* Welcome back.")}) as server:
        env = {"OMOIDE_HOME": str(omoide_home), "OMOIDE_BASE_URL": address(server) + "/v1", "OMOIDE_MODEL": "m",
               "OMOIDE_DISCOVER_SERVERS": "[]", "TERM": "xterm-256color"}
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
        name = f"omoide-typeahead-{uuid.uuid4().hex[:8]}"
        command = (f"env {exports} {shlex.quote(str(OMOIDE))} chat suzune; echo EXITED $?; "
                   "stty -a | grep -o -e '-*icanon' -e '-*echo ' | tr '\\n' ' ' | sed 's/^/MODE /'; echo; sleep 600")
        assert subprocess.run(["tmux", "new-session", "-d", "-s", name, "-x", "100", "-y", "30", command]).returncode == 0
        try:
            # At once: the interpreter has not even imported omoide yet.
            tmux("send-keys", "-t", name, "I just moved here from Osaka", "Enter", "and then")
            assert "Message Suzune" not in capture(name)  # before the first paint
            await until(lambda: user_messages(omoide_home) == ["I just moved here from Osaka"], "the message being sent", name)
            try:
                await until(lambda: "Welcome back." in capture(name), "the reply showing", name)
            except AssertionError as failed:  # CI saw the app end with 0 here once: the log says why
                logs = "\n".join(p.read_text(errors="replace")[-4000:] for p in sorted(omoide_home.rglob("omoide.log*")))
                raise AssertionError(f"{failed}\nomoide.log:\n{logs}") from None
            screen = capture(name)
            assert "I just moved here from Osaka" in screen
            composer = [line for line in screen.splitlines() if line.strip()][-2]
            assert composer.strip() == "and then"  # what followed the Enter waits, in order
            tmux("send-keys", "-t", name, "C-q")
            await until(lambda: "EXITED 0" in capture(name), "the app quitting", name)
            await until(lambda: "MODE" in capture(name), "stty reporting", name)
            mode = next(line for line in capture(name).splitlines() if line.startswith("MODE"))
            assert mode.split()[1:] == ["icanon", "echo"]  # the terminal is back in line mode, with echo
        finally:
            tmux("kill-session", "-t", name)
