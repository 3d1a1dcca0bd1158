"""How long the end-of-conversation pass takes, and that the next reply does not wait for it.

    python benchmarks/world_pass.py [--runs 3]

1. The pass on a scripted OpenAI-compatible server (tests/faultserver.py
   answering each step at once): what omoide itself costs (HTTP, SQLite,
   templates), per pass.
2. The pass on the embedded model (SmolLM2-135M, in-process), per pass.
3. The next reply on the embedded model, which shares one model and one lock
   with the pass: time to its first token with no pass running, and with a
   pass in flight (the reply gate cancels the step in flight and re-asks it
   after the reply). Also: how much longer the pass took because of it.

The conversation is one exchange that names an absent character (Wren), so
every step runs: summary, pair summary, memory, goal, descriptor,
familiarity, offscreen, offscreen memory/descriptor/goal, global memory.
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

sys.path.insert(0, str(Path(__file__).parents[1]))

from omoide.characters.library import find_character  # noqa: E402
from omoide.config import Settings  # noqa: E402
from omoide.events import ReplyDelta  # noqa: E402
from omoide.llm.base import Backend  # noqa: E402
from omoide.session import ChatSession  # noqa: E402
from omoide.store import Store  # noqa: E402
from tests.faultserver import FaultServer, Request, stream_reply  # noqa: E402
from tests.scripted import ScriptedBackend  # noqa: E402
from tests.world_script import WorldScript  # noqa: E402

LINE = "My exam is on Friday. Also, Wren told me she is afraid of the dark."
REPLY = "*She slides a black coffee across the counter.* Good luck on Friday, I suppose."


async def one_pass(home: Path, chat: Backend, summarizer: Backend, settings: Settings) -> tuple[float, int, int]:
    """Seconds for one pass, LLM calls it made, steps that failed."""
    async with await Store.open(home / f"{time.monotonic_ns()}.db") as store:
        session = await ChatSession.open(store, find_character("suzune"), settings, chat, summarizer=summarizer)
        async for _ in session.send(LINE):
            pass
        conversation = await session.end_conversation(background=False)
        start = time.perf_counter()
        result = await session.world.run(conversation.id)
        elapsed = time.perf_counter() - start
        calls = sum(1 for u in await store.world.updates(conversation_id=conversation.id) if u.template)
        await session.aclose()
        return elapsed, calls, len(result.failed)


async def scripted_server(home: Path, runs: int) -> list[float]:
    from omoide.llm.openai_compat import OpenAICompatBackend

    script = WorldScript(offscreen="Wren is afraid of the dark.")
    server = FaultServer()

    class Forever(list):  # type: ignore[type-arg]
        def pop(self, index: int = -1):  # type: ignore[no-untyped-def,override]
            return lambda request: stream_reply(script.answer(request.json()["messages"]))

    server.replies = Forever([None])  # type: ignore[assignment]  # never empty: every request is answered
    await server.start()
    times = []
    try:
        for _ in range(runs):
            backend = OpenAICompatBackend(Settings(base_url=server.base_url, model="scripted"))
            elapsed, calls, failed = await one_pass(home, ScriptedBackend([[REPLY]]), backend, Settings(user_name="Kai"))
            await backend.aclose()
            times.append(elapsed)
        print(f"  scripted server: {statistics.median(times) * 1000:.0f} ms per pass (median of {runs}; {calls} LLM calls, {failed} failed)")
    finally:
        await server.stop()
    return times


async def embedded(home: Path, runs: int) -> None:
    from omoide.llm.local import LocalBackend

    settings = Settings(user_name="Kai", max_tokens=48, temperature=0.0, context_size=2048)
    model = LocalBackend(settings)
    await model.load()
    times, fails = [], []
    for _ in range(runs):
        elapsed, calls, failed = await one_pass(home, ScriptedBackend([[REPLY]]), model, settings)
        times.append(elapsed)
        fails.append(failed)
    print(f"  embedded model:  {statistics.median(times):.1f} s per pass (median of {runs}; {calls} LLM calls; "
          f"steps failed validation per run: {fails})")

    # The next reply, on the same model as the pass.
    async with await Store.open(home / "reply.db") as store:
        session = await ChatSession.open(store, find_character("suzune"), settings, model, summarizer=model)

        async def first_token(text: str) -> tuple[float, float]:
            start = time.perf_counter()
            first = None
            async for event in session.send(text):
                if isinstance(event, ReplyDelta) and first is None:
                    first = time.perf_counter() - start
            return first or float("nan"), time.perf_counter() - start

        baseline = [await first_token(f"Tell me about the blend, take {i}.") for i in range(runs)]
        during, pass_times = [], []
        for i in range(runs):
            conversation = await session.end_conversation(background=False)
            started = time.perf_counter()
            task = asyncio.create_task(session.world.run(conversation.id))
            while not session.gate._background:  # a step is in flight on the model
                await asyncio.sleep(0.005)
            await asyncio.sleep(0.05)
            during.append(await first_token(f"Wait, one more thing, number {i}."))
            await task
            pass_times.append(time.perf_counter() - started)
        await session.aclose()
    b_first = statistics.median(x[0] for x in baseline) * 1000
    d_first = statistics.median(x[0] for x in during) * 1000
    print(f"  next reply, first token, no pass running:   {b_first:.0f} ms (median of {runs})")
    print(f"  next reply, first token, pass in flight:    {d_first:.0f} ms (median of {runs}; "
          f"{session.gate.preempted} step(s) cut short and asked again)")
    print(f"  the pass, with that reply in the middle:    {statistics.median(pass_times):.1f} s")


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--no-model", action="store_true", help="Skip the embedded model.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["OMOIDE_HOME"] = tmp
        home = Path(tmp)
        print("End-of-conversation pass (one exchange naming an absent character):")
        await scripted_server(home, args.runs)
        if not args.no_model:
            await embedded(home, args.runs)


if __name__ == "__main__":
    asyncio.run(main())
