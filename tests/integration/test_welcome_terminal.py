"""The first run's welcome in a real terminal (tmux), at 80x24: a message typed
before the first paint never reaches the model as "You". Its first line is the
name field's; what follows the Enter waits until the welcome is answered, and is
then sent under the name given (issue 42)."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import uuid
from pathlib import Path

import pytest

from tests.fakeservers import address, chat_reply, http_server
from tests.integration.test_typeahead_terminal import OMOIDE, user_messages
from tests.tmux import capture, tmux, until

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")


async def test_a_message_typed_before_the_welcome_waits_for_the_name(omoide_home: Path) -> None:
    with http_server({"POST /v1/chat/completions": chat_reply("*Suzune nods.* Welcome, Kai.")}) as server:
        env = {"OMOIDE_HOME": str(omoide_home), "OMOIDE_BASE_URL": address(server) + "/v1", "OMOIDE_MODEL": "m",
               "OMOIDE_DISCOVER_SERVERS": "[]", "OMOIDE_WELCOMED": "false", "TERM": "xterm-256color"}
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
        name = f"omoide-tui-keys-welcome-{uuid.uuid4().hex[:8]}"
        command = f"env {exports} {shlex.quote(str(OMOIDE))} chat suzune; sleep 600"
        assert subprocess.run(["tmux", "new-session", "-d", "-s", name, "-x", "80", "-y", "24", command]).returncode == 0
        pane = lambda: capture(name)  # noqa: E731
        try:
            tmux("send-keys", "-t", name, "Kai", "Enter", "Hi, I just moved here", "Enter")  # before omoide is even imported
            await until(lambda: "Welcome to omoide" in pane(), "the welcome showing", name)
            await until(lambda: "Kai" in pane(), "the name typed ahead in its field", name)
            assert user_messages(omoide_home) == [] and not [r for r in server.requests if r["path"].endswith("/chat/completions")]
            tmux("send-keys", "-t", name, "Escape")  # the defaults, with the name typed
            await until(lambda: user_messages(omoide_home) == ["Hi, I just moved here"], "the message being sent", name)
            await until(lambda: "Welcome, Kai." in pane(), "the reply showing", name)
            screen = pane()
            assert "Kai · " in screen and "You · " not in screen  # the header names you as the prompt does
            sent = [json.loads(r["body"]) for r in server.requests if r["path"].endswith("/chat/completions")]
            turn = next(s for s in sent if any("Hi, I just moved here" in m["content"] for m in s["messages"]))
            prompt = "\n".join(m["content"] for m in turn["messages"])
            assert "roleplay with Kai" in prompt and "roleplay with You" not in prompt
        finally:
            tmux("kill-session", "-t", name)
