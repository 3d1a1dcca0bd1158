"""The embedded model's first token after memory work: is the chat's cache still there?

    python benchmarks/embedded_cache.py [--turns 30]
    PYTHONPATH=/other/omoide/src python benchmarks/embedded_cache.py   # another version, to compare

A chat with the embedded SmolLM2-135M (in process: one model, one cache, one thread), at
the seed defaults (recent 15, threshold 20), context 8192, replies of at most
48 tokens, memory work on the same model (the default). Per turn: the time
from sending to the first token of the reply. Turns that come right after
memory work (a summary or diary compression ran after the previous reply)
are reported apart from the others: with memory requests of their own, the
model's cache holds the summary prompt and the reply's prompt is evaluated
from scratch; as continuations of the chat's prompt, it is still cached.
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

from server_cache import LINES  # noqa: E402

from omoide.characters.library import find_character  # noqa: E402
from omoide.config.settings import Settings  # noqa: E402
from omoide.chat.events import ReplyDelta  # noqa: E402
from omoide.memory.events import MemoryEvent, MemoryWorkStarted  # noqa: E402
from omoide.chat.session import ChatSession  # noqa: E402
from omoide.store import Store  # noqa: E402


async def run(turns: int) -> tuple[list[float], list[float], int]:
    from omoide.llm.local import LocalBackend

    settings = Settings(user_name="Kai", max_tokens=48, context_size=8192, temperature=0.7, threads=1)
    model = LocalBackend(settings)
    await model.load()
    started: list[MemoryEvent] = []
    after_memory: list[float] = []
    others: list[float] = []
    async with await Store.open() as store:
        session = await ChatSession.open(store, find_character("suzune"), settings, model, on_memory_event=started.append)
        previous_ran = False
        for turn in range(turns):
            memory_before = sum(isinstance(e, MemoryWorkStarted) for e in started)
            begin = time.perf_counter()
            first: float | None = None
            async for event in session.send(LINES[turn % len(LINES)]):
                if isinstance(event, ReplyDelta) and first is None:
                    first = time.perf_counter() - begin
            await session.wait_for_memory_work()
            ran = sum(isinstance(e, MemoryWorkStarted) for e in started) > memory_before
            if first is not None and turn > 0:  # the first reply finds nothing cached
                (after_memory if previous_ran else others).append(first)
                print(f"    turn {turn + 1:>3}: first token {first:5.2f} s" + (" (right after memory work)" if previous_ran else ""), flush=True)
            previous_ran = ran
        await session.aclose()
    return after_memory, others, sum(isinstance(e, MemoryWorkStarted) for e in started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home:
        os.environ["OMOIDE_HOME"] = home
        after, others, requests = asyncio.run(run(args.turns))
    print(f"embedded SmolLM2-135M, first token of the reply (load {os.getloadavg()[0]:.1f}; {requests} memory requests):")
    if after:
        print(f"  right after memory work: median {statistics.median(after):5.2f} s, max {max(after):5.2f} s ({len(after)} turns)")
    print(f"  other turns:             median {statistics.median(others):5.2f} s, max {max(others):5.2f} s ({len(others)} turns)")


if __name__ == "__main__":
    main()
