"""What the memo book costs in long chats: `python benchmarks/memo_book.py [--sizes 1000 10000 100000]`.

For chats made with `make_chat.py N --memos` (a memo for every 8 messages):
- read the book: every memo on the path to the head (`store.memos.on_path`);
- open it in the TUI (headless): from the key to the newest memos painted, and
  to every memo read (older ones load in the background, in chunks);
- scroll it: PageDown through 20 screens of the table, per screen;
- jump from its first memo to the batch, in the transcript (Enter);
- the memory state for one turn's prompt in memory_style 'memos' (median of 30);
- search the memos.
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
from make_chat import make_chat  # noqa: E402

from omoide.characters.library import find_character  # noqa: E402
from omoide.config.settings import Settings  # noqa: E402
from omoide.memory.book import memory_state  # noqa: E402
from omoide.chat.session import ChatSession  # noqa: E402
from omoide.store import Store  # noqa: E402


async def measure(n: int) -> dict[str, float]:
    from textual.widgets import DataTable

    from omoide.tui.app import OmoideApp
    from omoide.tui.screens.memos import MemoBookScreen

    chat_id = await make_chat(n, memos=True)
    store = await Store.open()
    chat = await store.chats.get(chat_id)
    assert chat.head_id is not None
    figures: dict[str, float] = {}
    t0 = time.perf_counter()
    pages = await store.memos.on_path(chat.head_id)
    figures["read"] = time.perf_counter() - t0
    figures["memos"] = len(pages)
    settings = Settings(memory_style="memos", user_name="Kai")
    times = []
    for _ in range(30):
        t0 = time.perf_counter()
        await memory_state(store, settings.memory, chat.head_id)
        times.append(time.perf_counter() - t0)
    figures["prompt"] = statistics.median(times)
    t0 = time.perf_counter()
    await store.memos.search("lighthouse promise", chat_id=chat_id)
    figures["search"] = time.perf_counter() - t0

    from tests.scripted import ScriptedBackend

    session = await ChatSession.open(store, find_character("suzune"), settings, ScriptedBackend(), chat_id=chat_id)
    app = OmoideApp(session)
    async with app.run_test(size=(140, 45)) as pilot:
        await pilot.pause()
        t0 = time.perf_counter()

        async def first_rows() -> float:
            # Watched beside the key press: the press returns only when the app is idle.
            while not (isinstance(app.screen, MemoBookScreen) and app.screen.memos):
                await asyncio.sleep(0.005)
            return time.perf_counter() - t0

        watcher = asyncio.create_task(first_rows())
        await pilot.press("ctrl+o")
        figures["open"] = await watcher
        while not app.screen.complete:
            await pilot.pause(0.01)
        figures["all"] = time.perf_counter() - t0
        table = app.screen.query_one(DataTable)
        table.move_cursor(row=0)
        await pilot.pause()
        t0 = time.perf_counter()
        for _ in range(20):
            await pilot.press("pagedown")
            await pilot.pause()
        figures["scroll"] = (time.perf_counter() - t0) / 20
        first = app.screen.memos[0]
        table.move_cursor(row=0)
        await pilot.pause()
        t0 = time.perf_counter()
        await pilot.press("enter")
        while not any(v.message.id == first.jump_id for v in app.transcript.views()):
            await pilot.pause(0.01)
        figures["jump"] = time.perf_counter() - t0
    await store.close()
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description="What the memo book costs in long chats.")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    args = parser.parse_args()
    print(f"{'messages':>9} | {'memos':>6} | {'read book':>9} | {'open book':>9} | {'all read':>9} | {'PageDown':>8} | {'jump':>7} | {'prompt memos':>12} | {'search':>7}")
    for n in args.sizes:
        with tempfile.TemporaryDirectory() as home:
            os.environ["OMOIDE_HOME"] = home
            f = asyncio.run(measure(n))
        print(f"{n:>9,} | {int(f['memos']):>6,} | {f['read'] * 1000:7.0f}ms | {f['open'] * 1000:7.0f}ms | {f['all'] * 1000:7.0f}ms | "
              f"{f['scroll'] * 1000:6.1f}ms | {f['jump'] * 1000:5.0f}ms | {f['prompt'] * 1000:10.2f}ms | {f['search'] * 1000:5.1f}ms", flush=True)


if __name__ == "__main__":
    main()
