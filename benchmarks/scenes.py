"""What a group scene costs the client, and how much of each prompt a cache can reuse.

    python benchmarks/scenes.py [--turns 120]

For a one-on-one chat, a scene of two and a scene of three (a scripted,
instant backend; real SQLite in a temp directory):
- client time per turn (your message stored, speaker chosen, prompt built and
  counted, reply stored), median and p95;
- the share of each prompt that is a common prefix with the previous prompt
  (what a single-slot cache such as llama.cpp's reuses) and with the same
  speaker's previous prompt (what a cache per speaker could reuse).
Then the cost of one speaker choice (the pure function).
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
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))


def _p95(values: list[float]) -> float:
    return sorted(values)[int(len(values) * 0.95) - 1]


async def run(cast: list[str], turns: int, home: Path) -> tuple[list[float], list[float], list[float]]:
    from omoide.characters.library import find_character
    from omoide.config.settings import Settings
    from omoide.memory.prompt.fit import shared_prefix_chars
    from omoide.chat.session import ChatSession
    from omoide.store import Store
    from tests.scripted import ScriptedBackend

    settings = Settings(user_name="Kai", scene_seed=1, gossip_rate=0.0, world_idle_hours=0)
    backend = ScriptedBackend(default=lambda messages: ["*nods* A short reply, with a detail or two to remember."])
    store = await Store.open(home / f"{'-'.join(cast)}.db")
    session = await ChatSession.open(store, find_character(cast[0]), settings, backend,
                                     others=[find_character(c) for c in cast[1:]])
    times: list[float] = []
    previous_any: str | None = None
    previous_own: dict[str, str] = {}
    shared_any: list[float] = []
    shared_own: list[float] = []
    rng = random.Random(2)
    for i in range(turns):
        text = f"Line {i}: {rng.choice(['tea', 'maps', 'the tide', 'a letter'])}, what do you think?"
        start = time.perf_counter()
        async for _ in session.send(text):
            pass
        times.append((time.perf_counter() - start) * 1000)
        prompt = session.last_prompt
        assert prompt is not None
        rendered = prompt.rendered()
        speaker = prompt.speaker.split(":")[0] or cast[0]
        if previous_any is not None:
            shared_any.append(shared_prefix_chars(previous_any, rendered) / len(rendered))
        if speaker in previous_own:
            shared_own.append(shared_prefix_chars(previous_own[speaker], rendered) / len(rendered))
        previous_any, previous_own[speaker] = rendered, rendered
        await session.memory_worker.wait()
    await session.aclose()
    await store.close()
    return times, shared_any, shared_own


def choice_cost(draws: int) -> float:
    from omoide.scene.speakers import Candidate, choose

    cands = [Candidate("a", "Ann"), Candidate("b", "Bo"), Candidate("c", "Cy")]
    rng = random.Random(1)
    start = time.perf_counter()
    for i in range(draws):
        choose(cands, rng=rng, text="and then we walked home", previous="c", familiarity={"a": 0.3, "b": 0.6},
               turns_since={"a": i % 4, "b": 2})
    return (time.perf_counter() - start) / draws * 1e6


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=120)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        os.environ["OMOIDE_HOME"] = str(home / "home")
        extra = home / "home" / "data" / "characters" / "mika"
        extra.mkdir(parents=True)
        (extra / "character.toml").write_text('name = "Mika"\ndescription = "A postman who knows everyone."\n')
        print(f"{args.turns} turns each; load average {os.getloadavg()[0]:.1f}")
        print(f"{'chat':<22} {'median ms':>10} {'p95 ms':>8} {'prefix vs previous':>19} {'vs same speaker':>16}")
        for cast in (["suzune"], ["suzune", "wren"], ["suzune", "wren", "mika"]):
            times, shared_any, shared_own = asyncio.run(run(cast, args.turns, home))
            label = "one-on-one" if len(cast) == 1 else f"scene of {len(cast)}"
            print(f"{label:<22} {statistics.median(times):>10.1f} {_p95(times):>8.1f} "
                  f"{statistics.mean(shared_any):>18.1%} {statistics.mean(shared_own) if shared_own else 0:>15.1%}")
    print(f"one speaker choice (3 present): {choice_cost(20000):.1f} µs")


if __name__ == "__main__":
    main()
