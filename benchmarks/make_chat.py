"""Make a big chat to measure with: `python benchmarks/make_chat.py N [--home DIR] [--memos]`.

Writes N messages (alternating user and character, a few days apart in
total), with a summary checkpoint every 20 messages, a diary entry every 50 and a
diary compression every 1,000, exactly as omoide would have stored them, into $OMOIDE_HOME (or --home).
With --memos, also a memo of two highlights for every batch of 8 messages.
Prints the chat id.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import sqlite3
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from omoide import locations
from omoide.store import Store

WORDS = (
    "the café station rain matcha promise tomorrow window lighthouse map island quiet "
    "laugh remember letter train evening warm cold shy secret novel chapter cat harbor"
).split()


def sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


MEMO_BATCH = 8


def add_memo(conn: sqlite3.Connection, chat_id: int, first: int, last: int, highlights: list[str], stamp: str) -> None:
    memo = conn.execute(
        "INSERT INTO memos (chat_id, anchor_id, first_id, author, created_at) VALUES (?, ?, ?, 'model', ?)",
        (chat_id, last, first, stamp),
    ).lastrowid
    version = conn.execute(
        "INSERT INTO memo_versions (memo_id, author, status, message_id, created_at) VALUES (?, 'model', 'ok', ?, ?)",
        (memo, last, stamp),
    ).lastrowid
    conn.executemany(
        "INSERT INTO memo_highlights (version_id, position, text) VALUES (?, ?, ?)",
        [(version, i, text) for i, text in enumerate(highlights)],
    )
    conn.execute("UPDATE memos SET version_id = ? WHERE id = ?", (version, memo))


async def make_chat(n: int, character: str = "suzune", seed: int = 7, *, memos: bool = False) -> int:
    """Create the chat through the store (so the schema is current), then bulk-insert."""
    store = await Store.open()
    chat = await store.chats.create(character, title=f"benchmark {n}", greeting="*looks up* Oh. It's you.")
    path = store.path
    await store.close()

    rng = random.Random(seed)
    start = datetime.now(UTC) - timedelta(days=max(1, n // 500))
    step = (datetime.now(UTC) - start) / max(n, 1)
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("BEGIN IMMEDIATE")
    parent = conn.execute("SELECT head_id FROM chats WHERE id = ?", (chat.id,)).fetchone()[0]
    summary_id = diary_id = None
    pending_summary = pending_diary = None
    ids: list[int] = [parent]
    for i in range(1, n):
        stamp = (start + step * i).isoformat(timespec="microseconds")
        role = "user" if i % 2 else "assistant"
        content = sentence(rng, rng.randint(8, 40))
        # Children inherit the newest summary/diary anchored at their parent.
        summary_id = pending_summary or summary_id
        diary_id = pending_diary or diary_id
        pending_summary = pending_diary = None
        cur = conn.execute(
            "INSERT INTO messages (chat_id, parent_id, role, content, created_at, status, depth, summary_id, diary_id) "
            "VALUES (?, ?, ?, ?, ?, 'complete', ?, ?, ?)",
            (chat.id, parent, role, content, stamp, i, summary_id, diary_id),
        )
        parent = cur.lastrowid
        ids.append(parent)
        if i % 50 == 0:
            # Every 20th entry stands for a diary compression, as the real diary gets one past 50 lines.
            author = "compression" if i % 1000 == 0 else "character"
            cur = conn.execute(
                "INSERT INTO diary_entries (chat_id, message_id, prev_id, author, content, created_at) VALUES (?, ?, ?, ?, ?, ?)",
                (chat.id, parent, diary_id, author, sentence(rng, 20), stamp),
            )
            pending_diary = cur.lastrowid
        if i % 20 == 0 and i > 20:
            cur = conn.execute(
                "INSERT INTO summaries (chat_id, anchor_id, covers_to_id, diary_to_id, content, created_at) VALUES (?, ?, ?, ?, ?, ?)",
                (chat.id, parent, ids[i - 15], pending_diary or diary_id, " ".join(sentence(rng, 25) for _ in range(6)), stamp),
            )
            pending_summary = cur.lastrowid
        if memos and (i + 1) % MEMO_BATCH == 0:
            add_memo(conn, chat.id, ids[i + 1 - MEMO_BATCH], parent, [sentence(rng, 12), sentence(rng, 10)], stamp)
    conn.execute("UPDATE chats SET head_id = ?, updated_at = ? WHERE id = ?", (parent, datetime.now(UTC).isoformat(), chat.id))
    conn.execute("COMMIT")
    conn.close()
    return chat.id


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("n", type=int, help="number of messages")
    parser.add_argument("--home", type=Path, help="OMOIDE_HOME to write into")
    parser.add_argument("--character", default="suzune")
    parser.add_argument("--memos", action="store_true", help="a memo for every batch of 8 messages")
    args = parser.parse_args()
    if args.home:
        os.environ["OMOIDE_HOME"] = str(args.home)
    t0 = time.perf_counter()
    chat_id = asyncio.run(make_chat(args.n, args.character, memos=args.memos))
    print(f"chat {chat_id}: {args.n} messages in {locations.database_file()} ({time.perf_counter() - t0:.1f} s)")


if __name__ == "__main__":
    main()
