"""Branch save and restore cost against chat size, beside a full database copy.

    python benchmarks/branches.py [--sizes 1000 10000 100000]

Save writes one row and restore moves one pointer, so both should stay flat
while the copy (SQLite's backup API, what a copy-the-file design pays) grows
with the history.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from make_chat import make_chat  # noqa: E402

from omoide.store import Store  # noqa: E402

REPEAT = 20


async def measure(n: int) -> tuple[float, float, float]:
    chat_id = await make_chat(n)
    store = await Store.open()
    chat = await store.chats.get(chat_id)
    head = chat.head_id
    assert head is not None
    path = await store.messages.path(head, limit=200)
    fork = path[0].id
    saves, restores = [], []
    for i in range(REPEAT):
        t0 = time.perf_counter()
        await store.branches.save(chat_id, f"b{i}", fork if i % 2 else head)
        saves.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        await store.branches.restore(chat_id, f"b{i}", autosave_name=f"auto-{i}")
        restores.append(time.perf_counter() - t0)
    db_path = store.path
    await store.close()
    copies = []
    for _ in range(3):
        target = db_path.with_suffix(".copy")
        t0 = time.perf_counter()
        src, dst = sqlite3.connect(db_path), sqlite3.connect(target)
        src.backup(dst)
        dst.close()
        src.close()
        copies.append(time.perf_counter() - t0)
        target.unlink()
    return statistics.median(saves), statistics.median(restores), statistics.median(copies)


def main() -> None:
    parser = argparse.ArgumentParser(description="Branch save/restore vs a full copy.")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    args = parser.parse_args()
    print(f"{'messages':>9} | {'save (ms)':>9} | {'restore (ms)':>12} | {'full copy (ms)':>14}")
    print(f"{'-' * 9}-|-{'-' * 9}-|-{'-' * 12}-|-{'-' * 14}")
    for n in args.sizes:
        with tempfile.TemporaryDirectory() as home:
            os.environ["OMOIDE_HOME"] = home
            save, restore, copy = asyncio.run(measure(n))
        print(f"{n:>9,} | {save * 1000:>9.2f} | {restore * 1000:>12.2f} | {copy * 1000:>14.1f}")
    print(f"(median of {REPEAT} saves/restores and 3 copies; each size in its own fresh database)")


if __name__ == "__main__":
    main()
