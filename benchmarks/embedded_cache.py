"""The embedded model's first token after memory work: is the chat's cache still there?

    python benchmarks/embedded_cache.py [--turns 30] [--reading SECONDS]
    PYTHONPATH=/other/omoide/src python benchmarks/embedded_cache.py   # another version, to compare

A chat with the embedded SmolLM2-135M (in process: one model, one cache, one thread), at
the seed defaults (recent 15, threshold 20), context 8192, replies of at most
48 tokens, memory work on the same model (the default). Per turn: the time
from sending to the first token of the reply, and the prompt tokens the
engine took from its cache. Turns that come right after memory work (a
summary or diary compression began after the previous reply) are reported
apart from the others.

By default each message waits until memory work has ended: what is left of
the gap is the prompt that memory work changed (a new summary part, old lines
gone), evaluated again. With `--reading SECONDS` the user reads and types for
that long after each reply and sends without waiting, as a user does; a turn
sent while memory work was still running is marked "memory work in flight"
(replies first: that work stops for the reply and is made again after it).
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


async def run(turns: int, reading: float | None) -> tuple[list[float], list[float], int, int]:
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
            in_flight = session.memory_worker.running
            async for event in session.send(LINES[turn % len(LINES)]):
                if isinstance(event, ReplyDelta) and first is None:
                    first = time.perf_counter() - begin
            if reading is None:
                await session.wait_for_memory_work()
                ran = sum(isinstance(e, MemoryWorkStarted) for e in started) > memory_before
            else:
                await asyncio.sleep(reading)  # the user reads the reply and types the next message
                ran = session.memory_worker.running or sum(isinstance(e, MemoryWorkStarted) for e in started) > memory_before
            if first is not None and turn > 0:  # the first reply finds nothing cached
                (after_memory if previous_ran else others).append(first)
                usage = session.turns.last_prompt.usage if session.turns.last_prompt else None
                tokens = f", {usage.cache_read_tokens}/{usage.prompt_tokens} prompt tokens cached" if usage else ""
                note = " (right after memory work)" if previous_ran else ""
                note += " (memory work in flight)" if in_flight else ""
                print(f"    turn {turn + 1:>3}: first token {first:5.2f} s{tokens}{note}", flush=True)
            previous_ran = ran
        await session.wait_for_memory_work()
        preempted = session.gate.preempted
        await session.aclose()
    return after_memory, others, sum(isinstance(e, MemoryWorkStarted) for e in started), preempted


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=30)
    parser.add_argument("--reading", type=float, default=None, metavar="SECONDS",
                        help="send each message this long after the reply, without waiting for memory work")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home:
        os.environ["OMOIDE_HOME"] = home
        after, others, requests, preempted = asyncio.run(run(args.turns, args.reading))
    pace = "after memory work ended" if args.reading is None else f"{args.reading:g} s after each reply"
    print(f"embedded SmolLM2-135M, first token of the reply, each message sent {pace} "
          f"(load {os.getloadavg()[0]:.1f}; {requests} memory tasks, {preempted} model calls stopped for a reply):")
    if after:
        print(f"  right after memory work: median {statistics.median(after):5.2f} s, max {max(after):5.2f} s ({len(after)} turns)")
    print(f"  other turns:             median {statistics.median(others):5.2f} s, max {max(others):5.2f} s ({len(others)} turns)")


if __name__ == "__main__":
    main()
