"""`omoide summary` and `omoide diary` print what was stored, every character of
it: raw Markdown when stdout is not a terminal (a pipe, a file), rendered but
with nothing eaten on a terminal."""

from __future__ import annotations

import asyncio
import os
import pty
import re
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from omoide.cli.app import app

SUMMARY = "Kai said <<U>> twice; Suzune <grins>.\nthunder\\; ok\nA second line &amp; a third."
DIARY = "He signs his letters <<U>>.\nHe wrote C:\\tea\\list on a napkin."
OMOIDE = Path(sys.executable).with_name("omoide")


async def _chat_with_a_summary_and_a_diary() -> None:
    from omoide.characters.library import find_character
    from omoide.chat.session import ChatSession
    from omoide.config.settings import Settings
    from omoide.domain.chat import DiaryAuthor
    from omoide.store import Store
    from tests.scripted import ScriptedBackend

    store = await Store.open()
    session = await ChatSession.open(store, find_character("suzune"), Settings(user_name="Kai"),
                                     ScriptedBackend([["Welcome back."]]))
    async for _ in session.send("Hello"):
        pass
    head = (await store.chats.latest("suzune")).head_id
    assert head is not None
    await store.memory.add_summary(session.chat.id, head, content=SUMMARY, covers_to_id=head, diary_to_id=None)
    await store.memory.add_diary_entry(session.chat.id, head, DIARY, DiaryAuthor.USER)
    await store.close()


def test_piped_summary_and_diary_are_raw_markdown_with_every_character_and_no_padding() -> None:
    asyncio.run(_chat_with_a_summary_and_a_diary())
    runner = CliRunner()
    summary = runner.invoke(app, ["summary", "suzune"], catch_exceptions=False)
    diary = runner.invoke(app, ["diary", "suzune"], catch_exceptions=False)
    assert summary.exit_code == 0 and diary.exit_code == 0, summary.stderr + diary.stderr
    assert summary.stdout == f"# The story so far with Suzune\n\n{SUMMARY}\n"
    assert diary.stdout.startswith("# Suzune's diary\n\n")
    for line in DIARY.splitlines():
        assert f"\n{line}\n" in diary.stdout
    assert not any(line.endswith(" ") for line in summary.stdout.splitlines() + diary.stdout.splitlines())


def _on_a_terminal(*args: str) -> str:
    """`omoide ARGS` with its stdout on a pseudo-terminal, 100 columns wide."""
    main, side = pty.openpty()
    env = {**os.environ, "COLUMNS": "100", "LINES": "40", "TERM": "xterm-256color"}
    process = subprocess.Popen([str(OMOIDE), *args], stdout=side, stderr=subprocess.PIPE, env=env)
    os.close(side)
    chunks = []
    while True:
        try:
            chunk = os.read(main, 4096)
        except OSError:  # the other side closed: the command ended
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(main)
    assert process.wait(timeout=60) == 0, process.stderr.read() if process.stderr else ""
    return re.sub(r"\x1b\[[0-9;?]*[a-zA-Z]", "", b"".join(chunks).decode()).replace("\r\n", "\n")


def test_on_a_terminal_summary_and_diary_are_rendered_with_nothing_eaten() -> None:
    asyncio.run(_chat_with_a_summary_and_a_diary())
    summary = [line.strip() for line in _on_a_terminal("summary", "suzune").splitlines()]
    assert "The story so far with Suzune" in summary
    for line in SUMMARY.splitlines():
        assert line in summary  # its own line, brackets, backslash and entity kept
    diary = [line.strip() for line in _on_a_terminal("diary", "suzune").splitlines()]
    for line in DIARY.splitlines():
        assert line in diary
