"""`omoide world`, `omoide log`, `omoide end` and `omoide templates`, as a user runs them."""

from __future__ import annotations

import re

import asyncio
import os
import stat
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from omoide.characters.library import find_character
from omoide.config.settings import Settings
from omoide.chat.session import ChatSession
from omoide.store import Store
from tests.faultserver import FaultServer, Reply, Request, stream_reply
from tests.scripted import ScriptedBackend
from tests.world_script import WorldScript, step_of

runner = CliRunner()
FACT = "Wren is afraid of the dark and keeps the lighthouse lamp on all night."


def run(*args: str):  # type: ignore[no-untyped-def]
    return runner.invoke(__import__("omoide.cli.app", fromlist=["app"]).app, list(args), catch_exceptions=False)


async def tell_suzune_about_wren(script: WorldScript) -> None:
    async with await Store.open() as store:
        session = await ChatSession.open(store, find_character("suzune"), Settings(user_name="Kai"),
                                         ScriptedBackend(), summarizer=ScriptedBackend(default=script.default()))
        async for _ in session.send("Between us: Wren is afraid of the dark. She keeps the lamp on all night."):
            pass
        conversation = await session.end_conversation(background=False)
        await session.world.run(conversation.id)
        await session.aclose()


def test_a_fact_told_to_one_character_about_another_shows_up_in_omoide_world() -> None:
    script = WorldScript(offscreen=FACT, memory=lambda text: "Wren keeps the lighthouse lamp on; she fears the dark."
                         if "about Wren" in text else "Kai is a regular who knows Wren.")
    asyncio.run(tell_suzune_about_wren(script))
    result = run("world", "suzune")
    assert result.exit_code == 0, result.output
    text = " ".join(result.stdout.split())
    assert "Wren — regular customer · familiarity 0.00" in text
    assert re.search(rf"Heard from others: - #1 \[\d\d/\d\d \d\d:\d\d\] {re.escape(FACT)}", text)  # dated when heard
    assert "Memory: Wren keeps the lighthouse lamp on; she fears the dark." in text
    assert "Kai (you) — regular customer · familiarity 0.15" in text
    assert "Goal: Ask whether the exam went well." in text
    # Wren never heard a thing, and says so.
    assert "No relationships yet" in run("world", "wren").stdout

    only = " ".join(run("world", "suzune", "--about", "wren").stdout.split())
    assert FACT in only and "Kai (you)" not in only


def test_the_log_lists_each_update_with_before_after_template_and_model() -> None:
    asyncio.run(tell_suzune_about_wren(WorldScript(offscreen=FACT)))
    result = run("log", "suzune", "--full")
    assert result.exit_code == 0, result.output
    out = " ".join(result.stdout.split())
    assert "Conversation #1 · chat #1, messages #1–#5" in out  # the greeting (and its swipes), yours, the reply
    for step in ("summary", "pair_summary", "memory", "goal", "descriptor", "familiarity", "offscreen", "global"):
        assert f" {step} " in out, step
    assert "world.offscreen · scripted · script" in out
    assert FACT in out and "before: (none)" in out


@pytest.fixture
def editor(tmp_path: Path) -> Path:
    """An $EDITOR that replaces the file with the text in $NEW_TEXT."""
    script = tmp_path / "fake-editor"
    script.write_text(f"#!{sys.executable}\nimport os, sys\nopen(sys.argv[1], 'w').write(os.environ['NEW_TEXT'])\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return script


def test_templates_edit_names_an_unknown_placeholder_and_reset_keeps_your_copy(
    editor: Path, omoide_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EDITOR", str(editor))
    monkeypatch.setenv("NEW_TEXT", "Goal of {char} toward {other}, given {mood}.")
    result = run("templates", "edit", "world.goal")
    assert result.exit_code == 1
    assert "unknown placeholder {mood}" in result.stderr and "shipped default is used" in " ".join(result.stderr.split())
    listing = " ".join(run("templates", "list").stdout.split())
    assert "world.goal default (override invalid)" in listing and "{mood}" in listing

    monkeypatch.setenv("NEW_TEXT", "Goal of {char} toward {other}: {summary}")
    assert run("templates", "edit", "world.goal").exit_code == 0
    assert "world.goal override" in " ".join(run("templates", "list").stdout.split())
    assert "Goal of {char} toward {other}: {summary}" in run("templates", "show", "world.goal").stdout

    result = run("templates", "reset", "world.goal")
    assert result.exit_code == 0 and "Your copy was kept as" in result.stdout
    kept = list((omoide_home / "config" / "templates").glob("world.goal.txt.replaced-*"))
    assert len(kept) == 1 and "{summary}" in kept[0].read_text()
    assert "world.goal default " in " ".join(run("templates", "list").stdout.split())
    assert "There is no template named 'nope'" in run("templates", "edit", "nope").stderr


def test_the_summary_template_is_overridable_too(omoide_home: Path) -> None:
    from omoide.domain.chat import Message, Role
    from omoide.memory.summary import summary_request

    folder = omoide_home / "config" / "templates"
    folder.mkdir(parents=True)
    (folder / "summary.txt").write_text("Sum up {name} and {user}, briefly.")
    message = Message(1, 1, None, Role.USER, "hi", created_at=__import__("datetime").datetime.now())
    assert summary_request("Mika", "Kai", None, [message])[0]["content"] == "Sum up Mika and Kai, briefly."
    (folder / "summary.txt").write_text("Sum up {name} and {usr}.")
    assert summary_request("Mika", "Kai", None, [message])[0]["content"].startswith("Summarize the following conversation")


async def test_omoide_end_runs_the_pass_against_a_scripted_server(omoide_home: Path) -> None:
    script = WorldScript()
    server = FaultServer()

    broken = {"goal"}

    def reply(request: Request):  # type: ignore[no-untyped-def]
        if step_of(request.json()["messages"]) in broken:
            broken.clear()
            return Reply(status=500, body=b'{"error": {"message": "out of memory"}}')
        return stream_reply(script.answer(request.json()["messages"]))

    server.replies = _Forever(reply)  # type: ignore[assignment]
    await server.start()
    try:
        async with await Store.open() as store:
            session = await ChatSession.open(store, find_character("suzune"), Settings(user_name="Kai"), ScriptedBackend())
            async for _ in session.send("My exam is on Friday."):
                pass
            await session.aclose()
        env = {**os.environ, "OMOIDE_BASE_URL": server.base_url, "OMOIDE_MODEL": "scripted", "OMOIDE_USER_NAME": "Kai",
               "OMOIDE_MAX_RETRIES": "0", "COLUMNS": "200"}
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "omoide.cli.app", "end", "suzune", env=env,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )
        stdout, stderr = await proc.communicate()
        assert proc.returncode == 0, stderr.decode()
        text = " ".join(stdout.decode().split())
        assert "Conversation #1 ended" in text and "world.goal · openai · scripted" in text
        assert script.steps() == ["summary", "memory", "descriptor", "global"]  # the goal's request got a 500
        warning = " ".join(stderr.decode().split())
        assert "1 step(s) failed; the previous memory is kept" in warning and "goal" in warning
        async with await Store.open() as store:
            assert (await store.world.view("suzune")).about("user:Kai").goal == ""

        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "omoide.cli.app", "end", "suzune", "--retry", env=env,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )
        stdout, stderr = await proc.communicate()
        assert proc.returncode == 0 and b"Ran 1 unfinished pass(es)." in stdout, stderr.decode()
        assert script.steps()[-1] == "goal"
        async with await Store.open() as store:
            assert (await store.world.view("suzune")).about("user:Kai").goal == "Ask whether the exam went well."

        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "omoide.cli.app", "end", "suzune", env=env,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )
        _, stderr = await proc.communicate()
        assert proc.returncode == 0 and b"Nothing was said to Suzune since the last conversation ended" in stderr  # nothing yet
    finally:
        await server.stop()


class _Forever(list):  # type: ignore[type-arg]
    """A reply queue that never runs out: every request gets the same handler."""

    def __init__(self, handler) -> None:  # type: ignore[no-untyped-def]
        super().__init__([handler])
        self.handler = handler

    def pop(self, index: int = -1):  # type: ignore[no-untyped-def,override]
        return self.handler
