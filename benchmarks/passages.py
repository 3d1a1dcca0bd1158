"""Per-turn time of "memories that come to mind" against chat size.

    python benchmarks/passages.py [--sizes 1000 10000] [--turns 20]

Each chat comes from make_chat.py (a 24-word vocabulary: every query word is in
most messages, the worst case for bm25), with a fact planted in message 100.
Each turn adds a user message of make_chat's words to the head, reads the
memory at the head as a turn does (memory_state, default settings: not timed)
and times the layer alone (`come_to_mind`: the query from the latest three
messages, one FTS5 query, one walk up the path, the ranking); median over the
turns. A last turn touches the planted fact in other words and says whether
it came to mind.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from make_chat import make_chat, sentence  # noqa: E402

from omoide.config.sections import MemorySettings  # noqa: E402
from omoide.domain.chat import Role  # noqa: E402
from omoide.memory.book import memory_state  # noqa: E402
from omoide.memory.passages import Voices, come_to_mind  # noqa: E402
from omoide.store import Store  # noqa: E402

PLANTED = "My sister Ingrid keeps seventeen beehives behind the orchard."
TOUCH = "Do the bees still sting your sister?"


async def measure(n: int, turns: int) -> tuple[float, float, bool]:
    chat_id = await make_chat(n)
    store = await Store.open()
    chat = await store.chats.get(chat_id)
    assert chat.head_id is not None
    early = (await store.messages.path_slice(chat.head_id, min(100, n // 10), 1))[0]
    async with store.db.write() as conn:
        await conn.execute("UPDATE messages SET content = ? WHERE id = ?", (PLANTED, early.id))
    settings = MemorySettings()
    voices = Voices("Kai", "Suzune")
    rng = random.Random(11)
    head = chat.head_id
    times: list[float] = []

    async def turn(text: str) -> list[str]:
        nonlocal head
        head = (await store.messages.add(chat_id, head, Role.USER, text)).id
        state = await memory_state(store, settings, head)
        t0 = time.perf_counter()
        found = await come_to_mind(store, chat_id, head, state.window, voices=voices, now=datetime.now(UTC),
                                   half_life_days=settings.half_life_days, limit=settings.recall_passages,
                                   token_budget=settings.recall_passages_tokens)
        times.append(time.perf_counter() - t0)
        return [p.text for p in found]

    for _ in range(turns):
        await turn(sentence(rng, 20))
    common = statistics.median(times) * 1000
    times.clear()
    found = await turn(TOUCH)
    await store.close()
    return common, times[0] * 1000, PLANTED in found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10_000])
    parser.add_argument("--turns", type=int, default=20)
    args = parser.parse_args()
    print("| messages | per turn, common words (median) | a turn touching the planted fact | planted fact came to mind |")
    print("| ---: | ---: | ---: | :---: |")
    for n in args.sizes:
        with tempfile.TemporaryDirectory() as home:
            os.environ["OMOIDE_HOME"] = home
            common, touch, found = asyncio.run(measure(n, args.turns))
        print(f"| {n:,} | {common:.1f} ms | {touch:.1f} ms | {'yes' if found else 'no'} |", flush=True)


if __name__ == "__main__":
    main()
