"""Long chats stay fast: 1,000 vs 10,000 vs 100,000 messages.

    python benchmarks/long_chats.py [--sizes 1000 10000 100000]

For each size, in a fresh data directory: time from starting the app to the
transcript's first paint (headless `run_test`, in-process, and for a whole
`python` process), resident memory after opening, time to jump to the top of
the chat, client-side time per turn, and full-text search time.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[1]))

from make_chat import make_chat  # noqa: E402

OPEN_CHAT = str(Path(__file__).with_name("open_chat.py"))


async def per_turn_and_search(chat_id: int) -> tuple[float, float]:
    from omoide.characters.library import find_character
    from omoide.config import Settings
    from omoide.session import ChatSession
    from omoide.store import Store
    from tests.scripted import ScriptedBackend

    store = await Store.open()
    session = await ChatSession.open(
        store, find_character("suzune"), Settings(), ScriptedBackend(default=lambda m: ["Mm."]), chat_id=chat_id,
        summarizer=ScriptedBackend(default=lambda m: ["They talked quietly about the harbour and she seemed pleased he stayed."]),
    )
    turns = []
    for i in range(20):
        t0 = time.perf_counter()
        async for _ in session.send(f"turn {i}: the rain on the window"):
            pass
        turns.append(time.perf_counter() - t0)
        await session.wait_for_memory_work()
    searches = []
    for word in ("lighthouse", "matcha promise", "harbor", "secret novel"):
        t0 = time.perf_counter()
        await store.messages.search(word, chat_id=chat_id, limit=50)
        searches.append(time.perf_counter() - t0)
    await store.close()
    return statistics.median(turns), statistics.median(searches)


def measure(n: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as home:
        os.environ["OMOIDE_HOME"] = home
        chat_id = asyncio.run(make_chat(n))
        start = time.perf_counter()
        out = subprocess.run([sys.executable, OPEN_CHAT, "--top"], capture_output=True, text=True, timeout=300)
        wall = time.perf_counter() - start
        line = next((x for x in out.stdout.splitlines() if x.startswith("opened")), None)
        if line is None:
            raise SystemExit(out.stderr[-3000:])
        painted, top, rss, widgets = (float(x) for x in line.split()[1:])
        turn, search = asyncio.run(per_turn_and_search(chat_id))
    return {"paint": painted, "wall": wall, "rss": rss, "top": top, "turn": turn, "search": search, "widgets": widgets}


def main() -> None:
    parser = argparse.ArgumentParser(description="Long-chat figures.")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    args = parser.parse_args()
    rows = {n: measure(n) for n in args.sizes}
    print("| messages | first paint (in-process) | whole process to paint | RSS after open | jump to top | per-turn overhead | search |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for n, r in rows.items():
        print(f"| {n:,} | {r['paint'] * 1000:.0f} ms | {r['wall'] * 1000:.0f} ms | {r['rss']:.0f} MiB | {r['top'] * 1000:.0f} ms | "
              f"{r['turn'] * 1000:.1f} ms | {r['search'] * 1000:.1f} ms |")
    if len(rows) > 1:
        small, big = rows[min(rows)], rows[max(rows)]
        ratios = {k: big[k] / small[k] for k in ("paint", "rss", "top", "turn")}
        print("largest / smallest: " + ", ".join(f"{k} {v:.2f}x" for k, v in ratios.items()) + f" (mounted message widgets: {int(big['widgets'])})")


if __name__ == "__main__":
    main()
