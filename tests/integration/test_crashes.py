"""kill -9 at random moments: while a reply streams, while compression runs,
while branches are saved and restored. After every kill the database passes
SQLite's integrity check, every message stored before is still there, and the
next run resumes (a reply cut off by the kill is kept and marked interrupted)."""

from __future__ import annotations

import asyncio
import os
import random
import signal
import sqlite3
import sys
import textwrap
from pathlib import Path


from tests.faultserver import FaultServer, Reply, Request, sse, text_chunk

KILLS = 50


def slow_reply(request: Request) -> Reply:
    if "tokenize" in request.path:
        return Reply(status=404, body=b'{"error": "no tokenizer here"}')
    system = request.json()["messages"][0]["content"]
    if system.startswith("Summarize the following conversation"):
        summary = "They spoke about the lighthouse and the maps, and she seemed glad he had come back again."
        return Reply(chunks=[0.2, sse(text_chunk(summary), text_chunk("", "stop"), "[DONE]")])
    chunks: list[bytes | float] = []
    for i in range(40):
        chunks += [sse(text_chunk(f"word{i} ")), 0.04]
    chunks.append(sse(text_chunk("", "stop"), "[DONE]"))
    return Reply(chunks=chunks)


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
    for _ in range(KILLS * 8):
        fault_server.queue(slow_reply)
    env = {
        **os.environ, "OMOIDE_HOME": str(tmp_path / "home"), "OMOIDE_BASE_URL": fault_server.base_url,
        "OMOIDE_MODEL": "m", "OMOIDE_SUMMARY_THRESHOLD": "3", "OMOIDE_RECENT_MESSAGES": "2",
    }
    db = tmp_path / "home" / "data" / "omoide.db"
    rng = random.Random(1234)
    interrupted_seen = False
    for i in range(KILLS):
        before = snapshot(db)
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "omoide.cli", "say", "wren", f"message {i}",
            env=env, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
        )
        await asyncio.sleep(rng.uniform(0.3, 2.8))
        if proc.returncode is None:
            proc.send_signal(signal.SIGKILL)
        await proc.wait()
        after = snapshot(db)
        for message_id, (content, status) in before.items():
            assert message_id in after, f"message {message_id} vanished after kill {i}"
            if status == "complete":
                assert after[message_id] == (content, status), f"message {message_id} changed after kill {i}"
        interrupted_seen |= any(status in ("streaming", "interrupted") and content for content, status in after.values())
    assert interrupted_seen, "no kill landed mid-reply; the timing needs adjusting"

    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "omoide.cli", "say", "wren", "are you still there?",
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

    asyncio.run(main(sys.argv[1]))
    """
)


async def test_kill_9_during_branch_save_and_restore_leaves_the_old_or_new_head(tmp_path: Path) -> None:
    from omoide.domain import Role
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
        proc = await asyncio.create_subprocess_exec(sys.executable, "-c", BRANCHER, str(db))
        await asyncio.sleep(rng.uniform(0.3, 0.8))
        proc.send_signal(signal.SIGKILL)
        await proc.wait()
        conn = sqlite3.connect(db)
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        (chat_head,) = conn.execute("SELECT head_id FROM chats").fetchone()
        branch_targets = {row[0] for row in conn.execute("SELECT message_id FROM branches")}
        count = conn.execute("SELECT count(*) FROM messages").fetchone()[0]
        conn.close()
        assert chat_head in valid_heads and branch_targets <= valid_heads and count == 6
