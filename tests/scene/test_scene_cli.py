"""`omoide say A --with B`, `--speaker`, `omoide end` on a scene, `omoide chats`
and the exports, run as a user runs them (subprocesses against a scripted server)."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

from tests.faultserver import FaultServer, Reply, Request, stream_reply
from tests.world_script import WorldScript, step_of


def _answer(script: WorldScript, request: Request):  # type: ignore[no-untyped-def]
    if "/chat/completions" not in request.path:  # token counts, model lists: not served here
        return Reply(status=404, body=b'{"error": {"message": "not here"}}')
    messages = request.json()["messages"]
    if step_of(messages) != "chat":
        return stream_reply(script.answer(messages))
    system = str(messages[0]["content"])
    who = "Wren" if "Halloran" in system else "Suzune"
    return stream_reply(f"({who} here)\nand a second line")


class _Forever(list):  # type: ignore[type-arg]
    def __init__(self, handler) -> None:  # type: ignore[no-untyped-def]
        super().__init__([handler])

    def pop(self, index: int = -1):  # type: ignore[no-untyped-def, override]
        return self[0]


async def omoide(env: dict[str, str], *args: str) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "omoide.cli.app", *args, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )
    stdout, stderr = await proc.communicate()
    assert proc.returncode is not None
    return proc.returncode, stdout.decode(), stderr.decode()


async def test_say_with_a_scene_end_chats_and_exports(omoide_home: Path, tmp_path: Path) -> None:
    script = WorldScript()
    server = FaultServer()
    server.replies = _Forever(lambda request: _answer(script, request))  # type: ignore[assignment]
    await server.start()
    env = {**os.environ, "OMOIDE_BASE_URL": server.base_url, "OMOIDE_MODEL": "scripted", "OMOIDE_USER_NAME": "Kai",
           "OMOIDE_MAX_RETRIES": "0", "COLUMNS": "200", "OMOIDE_TOOLS": "inline", "OMOIDE_GOSSIP_RATE": "0"}
    try:
        code, out, err = await omoide(env, "say", "suzune", "--with", "wren", "Wren, are the charts done?")
        assert code == 0, err
        assert out == "Wren: (Wren here) and a second line\n"
        code, out, err = await omoide(env, "say", "suzune", "--with", "wren", "--speaker", "suzune", "And coffee?", "--turns", "2")
        assert code == 0, err
        assert out.splitlines() == ["Suzune: (Suzune here) and a second line", "Wren: (Wren here) and a second line"]
        code, out, err = await omoide(env, "say", "suzune", "--with", "wren", "--speaker", "Mika", "Hm?")
        assert code == 1 and "There is no character called 'Mika'" in " ".join(err.split())

        code, out, _ = await omoide(env, "chats")
        assert "suzune, wren" in out and "Scene with Suzune, Wren" in out

        code, out, _ = await omoide(env, "export", "suzune", "-f", "md")
        assert code == 0 and "**Wren**" in out and "**Suzune**" in out, out
        assert "Hm?" not in out  # a bad --speaker stores nothing
        code, out, _ = await omoide(env, "export", "suzune", "-f", "jsonl")
        names = [json.loads(line).get("name") for line in out.splitlines()[1:]]
        assert names == ["Suzune", "Kai", "Wren", "Kai", "Suzune", "Wren"], names
        code, out, _ = await omoide(env, "export", "suzune", "-f", "tree")
        assert '"speaker": "wren"' in out

        code, out, err = await omoide(env, "end", "wren")  # a scene is found from any of its characters
        assert code == 0, err
        assert "Suzune and Wren are remembering it" in " ".join(out.split())
        code, out, _ = await omoide(env, "world", "wren")
        text = " ".join(out.split())
        assert "Suzune" in text and "familiarity 0.15" in text and "Kai (you)" in text
    finally:
        await server.stop()
