"""Time per recall call against chat size: what the `recall` tool and `/recall` cost.

    python benchmarks/recall.py [--sizes 1000 10000 100000]

Each chat comes from make_chat.py (its vocabulary is 24 words, so a common
query matches nearly every message: the worst case). A rare phrase is planted
in one early message. Two queries are timed, median of 20 calls each, through
the same function the tool uses (full-text candidates, one walk up the path,
ranking): a rare one ("brass key", found in the planted message) and a common
one ("lighthouse promise", matching most of the chat).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from make_chat import make_chat  # noqa: E402

from omoide.memory.recall import recall  # noqa: E402
from omoide.store import Store  # noqa: E402

REPEAT = 20
PLANTED = "The old keeper gave me a brass key for the lighthouse door."


async def measure(n: int) -> tuple[float, float, bool]:
    chat_id = await make_chat(n)
    store = await Store.open()
    chat = await store.chats.get(chat_id)
    assert chat.head_id is not None
    early = (await store.messages.path_slice(chat.head_id, min(100, n // 10), 1))[0]
    async with store.db.write() as conn:
        await conn.execute("UPDATE messages SET content = ? WHERE id = ?", (PLANTED, early.id))
    now = datetime.now(UTC)

    async def timed(query: str) -> tuple[float, list[str]]:
        times, lines = [], []
        for _ in range(REPEAT):
            t0 = time.perf_counter()
            found = await recall(store, chat_id, chat.head_id, query, now=now, half_life_days=30, names=("Kai", "Suzune"))  # type: ignore[arg-type]
            times.append(time.perf_counter() - t0)
            lines = [r.line() for r in found]
        return statistics.median(times) * 1000, lines

    rare, found = await timed("brass key")
    common, _ = await timed("lighthouse promise")
    await store.close()
    return rare, common, any("brass key" in line for line in found)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10_000, 100_000])
    args = parser.parse_args()
    print("| messages | recall, rare words | recall, common words | planted moment found |")
    print("| ---: | ---: | ---: | :---: |")
    for n in args.sizes:
        with tempfile.TemporaryDirectory() as home:
            os.environ["OMOIDE_HOME"] = home
            rare, common, found = asyncio.run(measure(n))
        print(f"| {n:,} | {rare:.1f} ms | {common:.1f} ms | {'yes' if found else 'no'} |", flush=True)


if __name__ == "__main__":
    main()
