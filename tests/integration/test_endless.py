"""Endless streams: background memory calls have a token and a time limit, and
Ctrl+C ends `omoide say` cleanly with the reply stored as interrupted."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import signal
import sqlite3
import sys
from pathlib import Path

import pytest

from omoide.domain.chat import Role
from omoide.memory.summary import SEGMENT_MIN_TOKENS
from omoide.store import Store
from tests.faultserver import Reply, text_chunk

NO_REPLY_CAP = {"OMOIDE_MAX_TOKENS": "100000000"}
"""A reply past max_tokens * 8 characters is cut: this keeps an endless one going for the test's minute."""
MEMORY_ENV = {"OMOIDE_SUMMARY_THRESHOLD": "3", "OMOIDE_RECENT_MESSAGES": "2", "OMOIDE_MODEL": "m", "OMOIDE_TOOLS": "inline"}
"""`tools = "inline"`: the replies are scripted in order, with no request to find out the tool form."""


def endless(text: str) -> Reply:
    """A stream that never ends: the same text chunk forever (a generator, not a list)."""
    chunk = f"data: {json.dumps(text_chunk(text))}\n\n".encode()
    return Reply(chunks=itertools.repeat(chunk))  # type: ignore[arg-type]


def silent_forever() -> Reply:
    """Keeps the connection alive with SSE comments and never sends a word."""
    return Reply(chunks=itertools.chain.from_iterable(itertools.repeat([b": ping\n\n", 0.2])))  # type: ignore[arg-type]


async def seed(home: Path) -> None:
    store = await Store.open(home / "data" / "omoide.db")
    chat = await store.chats.create("suzune", greeting="Welcome in.")
    head = chat.head_id
    for i in range(4):
        head = (await store.messages.add(chat.id, head, Role.USER if i % 2 == 0 else Role.ASSISTANT, f"line {i} about the sea")).id
    await store.close()


STARTED: list[asyncio.subprocess.Process] = []


@pytest.fixture(autouse=True)
async def no_process_left_behind():  # type: ignore[no-untyped-def]
    """A failed test must not leave a `say` reading an endless stream."""
    yield
    while STARTED:
        proc = STARTED.pop()
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


def _ctrl_c_as_in_a_terminal() -> None:
    """In the child, before it runs: Ctrl+C's default action, as in a user's
    terminal. A test run started in the background (`pytest &` in a script)
    has SIGINT ignored, children inherit that, and Python then never turns
    SIGINT into KeyboardInterrupt."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


async def start_say(fault_server, extra: dict[str, str]) -> asyncio.subprocess.Process:  # type: ignore[no-untyped-def]
    env = {**os.environ, "OMOIDE_BASE_URL": fault_server.base_url, **MEMORY_ENV, **extra}
    proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "omoide.cli.app", "say", "suzune", "Tell me more.", env=env,
                                                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
                                                preexec_fn=_ctrl_c_as_in_a_terminal)
    STARTED.append(proc)
    return proc


def replies(fault_server, chat: Reply, summary: Reply) -> None:  # type: ignore[no-untyped-def]
    from tests.faultserver import stream_reply

    answers = iter([chat, summary])

    def reply(request):  # type: ignore[no-untyped-def]
        if not request.path.endswith("/chat/completions"):
            return Reply(status=404, body=b"{}")
        return next(answers, stream_reply("…"))

    fault_server.queue(*[reply] * 8)


async def test_an_endless_summary_is_given_up_at_its_token_limit(omoide_home: Path, fault_server) -> None:  # type: ignore[no-untyped-def]
    from tests.faultserver import stream_reply

    await seed(omoide_home)
    replies(fault_server, stream_reply("The sea is calm."), endless("and then they walked on "))
    proc = await start_say(fault_server, {})
    out, err = await asyncio.wait_for(proc.communicate(), 120)
    assert proc.returncode == 0, err.decode()
    assert out.decode().strip() == "The sea is calm."
    assert f"past {SEGMENT_MIN_TOKENS} tokens" in " ".join(err.decode().split())  # a first summary's limit: about its messages


async def test_a_summary_that_never_says_a_word_is_given_up_after_memory_timeout(omoide_home: Path, fault_server) -> None:  # type: ignore[no-untyped-def]
    from tests.faultserver import stream_reply

    await seed(omoide_home)
    replies(fault_server, stream_reply("The sea is calm."), silent_forever())
    proc = await start_say(fault_server, {"OMOIDE_MEMORY_TIMEOUT": "2"})
    out, err = await asyncio.wait_for(proc.communicate(), 120)
    assert proc.returncode == 0, err.decode()
    assert "longer than 2 s (memory_timeout)" in " ".join(err.decode().split())


async def test_ctrl_c_during_an_endless_reply_exits_and_keeps_it_as_interrupted(omoide_home: Path, fault_server) -> None:  # type: ignore[no-untyped-def]
    await seed(omoide_home)
    replies(fault_server, endless("wave "), silent_forever())
    proc = await start_say(fault_server, NO_REPLY_CAP)
    assert proc.stdout is not None
    first = await asyncio.wait_for(proc.stdout.read(50), 60)  # the reply is streaming
    assert b"wave" in first
    proc.send_signal(signal.SIGINT)
    rest, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 130, err.decode()
    assert "Traceback" not in err.decode() and "Interrupted" in err.decode()
    row = sqlite3.connect(omoide_home / "data" / "omoide.db").execute(
        "SELECT status, content FROM messages WHERE role = 'assistant' ORDER BY id DESC LIMIT 1").fetchone()
    assert row[0] == "interrupted" and row[1].startswith("wave wave")


async def test_ctrl_c_while_memory_work_runs_exits_cleanly(omoide_home: Path, fault_server) -> None:  # type: ignore[no-untyped-def]
    from tests.faultserver import stream_reply

    await seed(omoide_home)
    replies(fault_server, stream_reply("The sea is calm."), silent_forever())
    proc = await start_say(fault_server, {})
    assert proc.stdout is not None and proc.stderr is not None
    line = await asyncio.wait_for(proc.stderr.readline(), 60)
    assert b"Updating memory" in line  # the reply is done; the summary call hangs
    proc.send_signal(signal.SIGINT)
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 130, err.decode()
    assert "Traceback" not in err.decode()
    row = sqlite3.connect(omoide_home / "data" / "omoide.db").execute(
        "SELECT status, content FROM messages WHERE role = 'assistant' ORDER BY id DESC LIMIT 1").fetchone()
    assert tuple(row) == ("complete", "The sea is calm.")
