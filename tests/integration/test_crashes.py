"""kill -9 at chosen moments: once the user's message is stored, once the reply
row holds text, once compression has asked for a summary, while branches are
saved and restored. Each kill waits for the moment it wants to be seen (in the
database, or at the server), never for a fixed time, so the test means the same
on a slow, busy machine. After every kill the database passes SQLite's
integrity check, every message stored before is still there, and the next run
resumes (a reply cut off by the kill is kept and marked interrupted)."""

from __future__ import annotations

import asyncio
import os
import random
import signal
import sqlite3
import sys
import textwrap
from pathlib import Path

from omoide.memory.shared import task_of
from tests.faultserver import FaultServer, Reply, Request, sse, text_chunk

KILLS = 50


class SlowServer:
    """Replies word by word; counts the summary requests it has seen."""

    def __init__(self) -> None:
        self.summaries = 0

    def __call__(self, request: Request) -> Reply:
        if "tokenize" in request.path or "apply-template" in request.path:
            return Reply(status=404, body=b'{"error": "no tokenizer here"}')
        task = task_of(request.json()["messages"])
        if task.startswith(("Summarize the following conversation", "Continue the running summary")):
            self.summaries += 1
            summary = "They spoke about the lighthouse and the maps, and she seemed glad he had come back again."
            return Reply(chunks=[0.2, sse(text_chunk(summary), text_chunk("", "stop"), "[DONE]")])
        chunks: list[bytes | float] = []
        for i in range(40):
            chunks += [sse(text_chunk(f"word{i} ")), 0.04]
        chunks.append(sse(text_chunk("", "stop"), "[DONE]"))
        return Reply(chunks=chunks)


def observed(db: Path, moment: str, after_id: int, text: str) -> bool:
    """Whether `moment` has happened in the database (read-only, so the writer is untouched)."""
    if not db.exists():
        return False
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
    except sqlite3.Error:
        return False
    try:
        if moment == "stored":
            query, args = "SELECT 1 FROM messages WHERE id > ? AND role = 'user' AND content = ?", (after_id, text)
        else:  # "streaming": the reply row exists and has text
            query, args = "SELECT 1 FROM messages WHERE id > ? AND role = 'assistant' AND status = 'streaming' AND content != ''", (after_id,)
        return conn.execute(query, args).fetchone() is not None
    except sqlite3.Error:
        return False  # the schema is still being created
    finally:
        conn.close()


async def kill_when(proc: asyncio.subprocess.Process, happened) -> bool:  # type: ignore[no-untyped-def]
    """SIGKILL `proc` as soon as `happened()` is true; False if it exited first."""
    while proc.returncode is None:
        if happened():
            proc.send_signal(signal.SIGKILL)
            return True
        try:
            await asyncio.wait_for(proc.wait(), 0.01)
        except TimeoutError:
            pass
    return False


def snapshot(db: Path) -> dict[int, tuple[str, str]]:
    if not db.exists():
        return {}
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        return {row[0]: (row[1], row[2]) for row in conn.execute("SELECT id, content, status FROM messages")}
    finally:
        conn.close()


async def test_kill_9_during_replies_and_compression_loses_nothing(tmp_path: Path, fault_server: FaultServer) -> None:
    server = SlowServer()
    for _ in range(KILLS * 8):
        fault_server.queue(server)
    env = {
        **os.environ, "OMOIDE_HOME": str(tmp_path / "home"), "OMOIDE_BASE_URL": fault_server.base_url,
        "OMOIDE_MODEL": "m", "OMOIDE_SUMMARY_THRESHOLD": "3", "OMOIDE_RECENT_MESSAGES": "2", "OMOIDE_TOOLS": "inline",
    }
    db = tmp_path / "home" / "data" / "omoide.db"
    rng = random.Random(1234)
    kills = {"stored": 0, "streaming": 0, "summarizing": 0}
    for i in range(KILLS):
        before = snapshot(db)
        newest = max(before, default=0)
        moment = rng.choice(list(kills))
        summaries = server.summaries
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "omoide.cli.app", "say", "wren", f"message {i}",
            env=env, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
        )
        if moment == "summarizing":
            killed = await kill_when(proc, lambda: server.summaries > summaries)
        else:
            killed = await kill_when(proc, lambda: observed(db, moment, newest, f"message {i}"))
        kills[moment] += killed
        await proc.wait()
        after = snapshot(db)
        for message_id, (content, status) in before.items():
            assert message_id in after, f"message {message_id} vanished after kill {i}"
            if status == "complete":
                assert after[message_id] == (content, status), f"message {message_id} changed after kill {i}"
        if killed and moment == "streaming":
            assert any(m > newest and status == "streaming" and content for m, (content, status) in after.items()), (
                "the text that had arrived before the kill must be kept"
            )
    assert kills["stored"] and kills["streaming"] and kills["summarizing"], kills

    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "omoide.cli.app", "say", "wren", "are you still there?",
        env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 0, err.decode()
    assert "word39" in out.decode()
    final = snapshot(db)
    statuses = {status for _, status in final.values()}
    assert "streaming" not in statuses  # replies cut off by a kill now read as interrupted
    conn = sqlite3.connect(db)
    head_ok = conn.execute("SELECT count(*) FROM chats WHERE head_id IS NOT NULL").fetchone()[0]
    summaries = conn.execute("SELECT count(*) FROM summaries").fetchone()[0]
    conn.close()
    assert head_ok >= 1 and summaries >= 1


BRANCHER = textwrap.dedent(
    """
    import asyncio, sys
    from pathlib import Path
    from omoide.store import Store

    async def main(path):
        store = await Store.open(Path(path))
        chat = (await store.chats.list())[0]
        i = 0
        while True:
            i += 1
            await store.branches.save(chat.id, f"b{i % 7}", [1, 3, 5][i % 3], force=True)
            await store.branches.restore(chat.id, f"b{(i * 3) % 7}" if i > 7 else f"b{i % 7}", autosave_name=f"auto-{i % 5}")
            print(i, flush=True)

    asyncio.run(main(sys.argv[1]))
    """
)


async def test_kill_9_during_branch_save_and_restore_leaves_the_old_or_new_head(tmp_path: Path) -> None:
    from omoide.domain.chat import Role
    from omoide.store import Store

    db = tmp_path / "omoide.db"
    store = await Store.open(db)
    chat = await store.chats.create("wren", greeting="0")
    head = chat.head_id
    for i in range(1, 6):
        head = (await store.messages.add(chat.id, head, Role.USER if i % 2 else Role.ASSISTANT, str(i))).id
    await store.close()
    valid_heads = {1, 3, 5, 6}
    rng = random.Random(99)
    for _ in range(20):
        proc = await asyncio.create_subprocess_exec(sys.executable, "-c", BRANCHER, str(db), stdout=asyncio.subprocess.PIPE)
        assert proc.stdout is not None
        rounds = rng.randint(1, 60)
        while True:  # kill after that many save/restore rounds, in the middle of the next
            line = await proc.stdout.readline()
            assert line, "the brancher stopped by itself"
            if int(line) >= rounds:
                break
        proc.send_signal(signal.SIGKILL)
        await proc.wait()
        conn = sqlite3.connect(db)
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        (chat_head,) = conn.execute("SELECT head_id FROM chats").fetchone()
        branch_targets = {row[0] for row in conn.execute("SELECT message_id FROM branches")}
        count = conn.execute("SELECT count(*) FROM messages").fetchone()[0]
        conn.close()
        assert chat_head in valid_heads and branch_targets <= valid_heads and count == 6
