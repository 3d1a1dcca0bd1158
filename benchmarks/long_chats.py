"""Long chats stay fast: 1,000 vs 10,000 vs 100,000 messages.

    python benchmarks/long_chats.py [--sizes 1000 10000 100000] [--runs 3]

For each size, in a fresh data directory: `omoide chat` itself, launched in a
real terminal (tmux, 160x50; see terminal.py), timed from launch to the chat's
last message drawn on screen; then Ctrl+Home, timed to the first message
drawn; the omoide process's resident memory when the last message was drawn,
and its peak after the jump. Then, headless and in-process, the client-side
time per turn (the model answering at once) and full-text search time.
Medians of `--runs` launches. The machine's load average is printed with the
figures: on a shared machine they move with it.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[1]))

from make_chat import make_chat  # noqa: E402

from terminal import bytecode, load, run_chat  # noqa: E402

LAST = "That was the last message: lantern-7319."
FIRST = "Oh. It's you."


async def per_turn_and_search(chat_id: int) -> tuple[float, float]:
    from omoide.characters.library import find_character
    from omoide.config.settings import Settings
    from omoide.chat.session import ChatSession
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


async def add_last_message(chat_id: int) -> None:
    """A last message no other one resembles, to know when it is on screen."""
    from omoide.domain.chat import Role
    from omoide.store import Store

    store = await Store.open()
    chat = await store.chats.get(chat_id)
    await store.messages.add(chat_id, chat.head_id, Role.USER, LAST)
    await store.close()


def measure(n: int, runs: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as home:
        os.environ["OMOIDE_HOME"] = home
        chat_id = asyncio.run(make_chat(n - 1))
        asyncio.run(add_last_message(chat_id))
        figures = [run_chat(home, last=LAST, first=FIRST) for _ in range(runs)]
        turn, search = asyncio.run(per_turn_and_search(chat_id))
    return {
        "paint": statistics.median(f.paint for f in figures), "top": statistics.median(f.jump for f in figures),
        "rss": statistics.median(f.rss_paint for f in figures), "peak": statistics.median(f.rss_peak for f in figures),
        "turn": turn, "search": search,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description="Long-chat figures.")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    print(bytecode())
    before = load()
    rows = {n: measure(n, args.runs) for n in args.sizes}
    print(f"machine: {before} before, {load()} after")
    print("| messages | `omoide chat` launch to last message drawn | jump to top (Ctrl+Home) | RSS at that paint | "
          "peak RSS after the jump | per-turn overhead | search |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for n, r in rows.items():
        print(f"| {n:,} | {r['paint'] * 1000:.0f} ms | {r['top'] * 1000:.0f} ms | {r['rss']:.0f} MiB | {r['peak']:.0f} MiB | "
              f"{r['turn'] * 1000:.1f} ms | {r['search'] * 1000:.1f} ms |")
    if len(rows) > 1:
        small, big = rows[min(rows)], rows[max(rows)]
        ratios = {k: big[k] / small[k] for k in ("paint", "top", "rss", "turn")}
        print("largest / smallest: " + ", ".join(f"{k} {v:.2f}x" for k, v in ratios.items()))


if __name__ == "__main__":
    main()
