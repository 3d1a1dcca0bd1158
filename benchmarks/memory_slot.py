"""Where memory work goes on the embedded engine's slots, measured by the engine's own counts.

    python benchmarks/memory_slot.py MODE [--turns 14]

MODE: `speaker` (memory work continues the chat's prompt on the slot of the
speaker who just replied), `own` (the default: laid out as the session lays
it out, on a slot of its own), `alone` (sent as a request of its own, on a
slot of its own). A scene of two on SmolLM2-135M, replies of 24 tokens,
recent 6 / threshold 8 so that memory work runs every few turns. Printed per
kind of request (replies, memory work): how many, prompt tokens evaluated,
and cached / prompt tokens (replies after the first two).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parents[1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("mode", choices=["speaker", "own", "alone"])
    parser.add_argument("--turns", type=int, default=14)
    args = parser.parse_args()
    home = tempfile.mkdtemp()
    os.environ["OMOIDE_HOME"] = home

    from omoide.characters.library import find_character
    from omoide.config.settings import Settings
    from omoide.llm.base import Usage, is_memory_task
    from omoide.llm.local import LocalBackend
    from omoide.memory import worker
    from omoide.chat.session import ChatSession
    from omoide.store import Store

    rows: list[tuple[str, int, int]] = []
    last_speaker: list[str | None] = [None]
    stream = LocalBackend.stream

    async def counted(self: LocalBackend, messages: Any, **kw: Any) -> Any:
        memory = is_memory_task(messages[-1]) or "speakers" not in messages[0]
        if not memory:
            last_speaker[0] = kw.get("cache_key")
        async for event in stream(self, messages, **kw):
            if isinstance(event, Usage) and event.prompt_tokens:
                rows.append(("memory" if memory else "reply", event.cache_read_tokens or 0, event.prompt_tokens))
            yield event

    LocalBackend.stream = counted  # type: ignore[method-assign]
    if args.mode == "speaker":
        worker.cache_key_of = lambda prefix, messages: last_speaker[0]  # type: ignore[assignment,misc]
    elif args.mode == "alone":
        schedule = worker.MemoryWorker.schedule
        worker.MemoryWorker.schedule = lambda self, head, prefix=None: schedule(self, head, None)  # type: ignore[method-assign]

    async def run() -> None:
        settings = Settings(user_name="Kai", scene_seed=1, gossip_rate=0.0, world_idle_hours=0, max_tokens=24, temperature=0.7,
                            seed=3, context_size=4096, engine_slots=3, recent_messages=6, summary_threshold=8)
        store = await Store.open(Path(home) / "omoide.db")
        session = await ChatSession.open(store, find_character("suzune"), settings, LocalBackend(settings),
                                         others=[find_character("wren")])
        for turn in range(args.turns):
            async for _ in session.send(f"Line {turn}: what do you think of the tide?"):
                pass
            await session.memory_worker.wait()
        await session.aclose()
        await store.close()

    asyncio.run(run())
    print(f"memory work: {args.mode}, {args.turns} turns, load average {os.getloadavg()[0]:.1f}")
    for kind in ("reply", "memory"):
        chosen = [r for r in rows if r[0] == kind]
        later = chosen[2:] if kind == "reply" else chosen
        cached, total = sum(r[1] for r in later), sum(r[2] for r in later)
        print(f"  {kind:<7} {len(chosen):>3} requests, {sum(t - c for _, c, t in chosen):>6} tokens evaluated, "
              f"cached {cached / max(total, 1):6.1%}")


if __name__ == "__main__":
    main()
