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

Each size runs twice, side by side: by words alone, and as a user with the
embedded engine meets it (static embeddings installed: the message vectors
found by meaning join the word matches). With meaning, the first turn makes
every message's vector (a session's first turn in that chat): it is printed
on its own, not in the median.
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
from omoide.llm import static_embeddings  # noqa: E402
from omoide.memory.book import memory_state  # noqa: E402
from omoide.memory.meaning import MeaningIndex  # noqa: E402
from omoide.memory.passages import Voices, come_to_mind  # noqa: E402
from omoide.store import Store  # noqa: E402

PLANTED = "My sister Ingrid keeps seventeen beehives behind the orchard."
TOUCH = "Do the bees still sting your sister?"


async def measure(n: int, turns: int, by_meaning: bool) -> tuple[float, float, float, bool]:
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
    meaning = MeaningIndex(store, chat_id) if by_meaning else None

    async def turn(text: str) -> list[str]:
        nonlocal head
        head = (await store.messages.add(chat_id, head, Role.USER, text)).id
        state = await memory_state(store, settings, head)
        t0 = time.perf_counter()
        found = await come_to_mind(store, chat_id, head, state.window, voices=voices, now=datetime.now(UTC),
                                   half_life_days=settings.half_life_days, limit=settings.recall_passages,
                                   token_budget=settings.passages_budget(8192), meaning=meaning)
        times.append(time.perf_counter() - t0)
        return [p.text for p in found]

    if meaning is not None:
        await asyncio.to_thread(static_embeddings.vectors, ["load the model once a process"])
    await turn(sentence(rng, 20))
    first = times.pop()
    for _ in range(turns):
        await turn(sentence(rng, 20))
    common = statistics.median(times) * 1000
    times.clear()
    found = await turn(TOUCH)
    await store.close()
    return first * 1000, common, times[0] * 1000, PLANTED in found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10_000])
    parser.add_argument("--turns", type=int, default=20)
    args = parser.parse_args()
    if not static_embeddings.available():
        print("static embeddings are not installed (pip install -e '.[local]'): words alone", file=sys.stderr)
    print("| messages | by | first turn | per turn, common words (median) | a turn touching the planted fact | planted fact came to mind |")
    print("| ---: | --- | ---: | ---: | ---: | :---: |")
    for n in args.sizes:
        for by_meaning in (False, True) if static_embeddings.available() else (False,):
            with tempfile.TemporaryDirectory() as home:
                os.environ["OMOIDE_HOME"] = home
                first, common, touch, found = asyncio.run(measure(n, args.turns, by_meaning))
            print(f"| {n:,} | {'words and meaning' if by_meaning else 'words'} | {first:.1f} ms | {common:.1f} ms "
                  f"| {touch:.1f} ms | {'yes' if found else 'no'} |", flush=True)


if __name__ == "__main__":
    main()
