"""Observation 7 of issue 23, in a real terminal (tmux 80x24): a notice that
fades while a busy backend streams a reply leaves nothing painted over the
rule above the composer. (The fragment reported with the embedded model was
not reproduced with this busy backend, on main or here; this guards it.)"""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from tests.tmux import capture, tmux, until

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")
SCRIPT = Path(__file__).with_name("gil_chat.py")


def rule_line(screen: str) -> str:
    lines = screen.splitlines()
    return next(line for line in reversed(lines) if line.startswith("───"))


async def test_a_faded_notice_leaves_no_fragment_over_the_rule_while_a_reply_streams(omoide_home: Path) -> None:
    env = {"OMOIDE_HOME": str(omoide_home), "OMOIDE_WELCOMED": "true", "OMOIDE_DISCOVER_SERVERS": "[]", "TERM": "xterm-256color"}
    exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
    name = f"omoide-toast-{uuid.uuid4().hex[:8]}"
    command = f"env {exports} {shlex.quote(sys.executable)} {shlex.quote(str(SCRIPT))}; sleep 600"
    assert subprocess.run(["tmux", "new-session", "-d", "-s", name, "-x", "80", "-y", "24", command]).returncode == 0
    screen = lambda: capture(name)  # noqa: E731
    try:
        await until(lambda: "Message Suzune" in screen(), "the composer appearing", name)
        tmux("send-keys", "-t", name, "hello", "Enter")
        await until(lambda: "word3" in screen(), "the reply streaming", name)
        tmux("send-keys", "-t", name, "/amnesia", "Enter")
        await until(lambda: "Amnesia is off" in screen(), "the notice", name)
        assert set(rule_line(screen())) != {"─"}  # the notice covers part of the rule
        await until(lambda: "Amnesia is off" not in screen(), "the notice fading", name, timeout=30)
        assert "writing…" in screen()  # still streaming: the busy backend holds the interpreter
        await until(lambda: set(rule_line(screen())) == {"─"}, "the rule repainted whole", name, timeout=5)
    finally:
        tmux("kill-session", "-t", name)
