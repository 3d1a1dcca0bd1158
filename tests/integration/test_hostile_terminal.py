"""Hostile text in a real terminal (tmux, a socket of its own, `set-clipboard
on`, so every OSC 52 the app lets through becomes a paste buffer and every
OSC 0 the pane's title): a card's greeting, a reply, a message of yours and a
memo carrying OSC 0, OSC 52, CSI, C1 and the end of a bracketed paste, and a
`[ui.keymap]` key name with an escape sequence. Every editor and /help is
opened on them; the pane's title never changes, and the only clipboard write
is the one /copy makes, which holds no byte below 0x20 but newline and tab."""

from __future__ import annotations

import asyncio
import os
import shlex
import shutil
import subprocess
import sys
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.fakeservers import address, chat_reply, http_server
from tests.integration.test_tavern_files import card_file
from tests.tmux import capture, tmux as run_tmux, until as wait_until

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")
OMOIDE = Path(sys.executable).with_name("omoide")
PAYLOAD = "\x1b]0;PWNED\x07 \x1b]52;c;cHduZWQ=\x07 \x1b[31mred\x1b[0m \x9b2J \x1b[201~echo RAN"


def omoide(home: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(OMOIDE), *args], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "OMOIDE_HOME": str(home), **env})


async def test_editors_help_and_copy_never_pass_an_escape_to_the_terminal(omoide_home: Path, tmp_path: Path) -> None:
    socket = f"omoide-hostile-{uuid.uuid4().hex[:8]}"

    def tmux(*args: str) -> str:
        return run_tmux(*args, server=socket)

    def pane() -> str:
        return capture("hostile", socket)

    async def until(condition: Callable[[], bool], what: str) -> None:
        await wait_until(condition, what, "hostile", server=socket)

    async def keys(*typed: str, then: Callable[[], bool], what: str) -> None:
        for key in typed:
            tmux("send-keys", "-t", "hostile", key)
            await asyncio.sleep(0.15)
        await until(then, what)

    with http_server({"POST /v1/chat/completions": chat_reply(f"Reply {PAYLOAD}")}) as server:
        env = {"OMOIDE_BASE_URL": address(server) + "/v1", "OMOIDE_MODEL": "m", "OMOIDE_DISCOVER_SERVERS": "[]",
               "OMOIDE_WELCOMED": "true", "OMOIDE_MEMORY_STYLE": "memos"}
        card = card_file(tmp_path, "Evil", first_mes=f"*waves* {PAYLOAD}")
        assert omoide(omoide_home, env, "characters", "import", str(card)).returncode == 0
        assert omoide(omoide_home, env, "say", "evil", f"Imported {PAYLOAD}").returncode == 0
        assert omoide(omoide_home, env, "memos", "evil", "--add", f"A memo {PAYLOAD}").returncode == 0
        config = omoide_home / "config" / "config.toml"
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text('[ui.keymap]\n"chat.diary" = "\\u001b]0;KEYMAP\\u0007\\u001b]52;c;a2V5bWFw\\u0007"\n')
        env |= {"OMOIDE_HOME": str(omoide_home), "OMOIDE_CONFIG": str(config), "TERM": "xterm-256color"}
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
        command = f"env {exports} {shlex.quote(str(OMOIDE))} chat evil; sleep 600"
        assert subprocess.run(["tmux", "-L", socket, "-f", "/dev/null", "new-session", "-d", "-s", "hostile",
                               "-x", "120", "-y", "40", command]).returncode == 0
        try:
            tmux("set", "-g", "set-clipboard", "on")
            await until(lambda: "Message Evil" in pane(), "the chat showing")
            title = tmux("display", "-p", "-t", "hostile", "#{pane_title}")
            assert "PWNED" not in title and "KEYMAP" not in title
            await until(lambda: "Reply ␛]0;PWNED␇" in pane(), "the reply showing inert")
            # Ctrl+Up, e: the reply's editor; then the greeting's (two messages up)
            await keys("C-Up", "e", then=lambda: "Ctrl+S saves it as a new version" in pane(), what="the reply's editor")
            await keys("Escape", then=lambda: "Ctrl+S saves" not in pane(), what="the reply's editor closed")
            # the editor's own heading: the greeting's text stands in the chat log too
            await keys("Up", "Up", "e", then=lambda: "Edit Evil's message #1" in pane() and "*waves* ␛]0;PWNED" in pane(),
                       what="the greeting's editor")
            await keys("Escape", "Escape", then=lambda: "Ctrl+S saves" not in pane(), what="back to the composer")
            # /memos, e: the memo's editor
            await keys("/memos", "Enter", then=lambda: "A memo" in pane(), what="the memo book")
            await keys("e", then=lambda: "Edit the memo" in pane(), what="the memo's editor")
            await keys("Escape", "Escape", then=lambda: "Edit the memo" not in pane() and "Message Evil" in pane(),
                       what="the memo book closed")
            # Up in the empty composer: your earlier message; then /help with the hostile key name
            await keys("Up", then=lambda: "Imported ␛]0;PWNED" in pane(), what="your earlier message in the composer")
            tmux("send-keys", "-t", "hostile", "C-a")
            await keys("C-k", then=lambda: "Imported ␛]0;PWNED" not in pane().split("──")[-1], what="the composer emptied")
            await keys("/help", "Enter", then=lambda: "Commands" in pane() and "Esc closes" in pane(), what="/help")
            await keys("Escape", then=lambda: "Esc closes" not in pane(), what="/help closed")
            assert tmux("list-buffers") == "", "a clipboard write got through before /copy"
            await keys("/copy", "Enter", then=lambda: "Copied the last reply" in pane(), what="/copy")
            buffers = tmux("list-buffers").splitlines()
            assert len(buffers) == 1, buffers
            copied = subprocess.run(["tmux", "-L", socket, "show-buffer"], capture_output=True, check=False).stdout
            assert copied.startswith(b"Reply ") and b"echo RAN" in copied
            assert not [b for b in copied if b < 0x20 and b not in (0x0A, 0x09)], copied
            assert tmux("display", "-p", "-t", "hostile", "#{pane_title}") == title
        finally:
            tmux("kill-server")
