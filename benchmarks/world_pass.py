"""How long the end-of-conversation pass takes, and that the next reply does not wait for it.

    python benchmarks/world_pass.py [--runs 3]

1. The pass on a scripted OpenAI-compatible server (tests/faultserver.py
   answering each step at once): what omoide itself costs (HTTP, SQLite,
   templates), per pass.
2. The pass on the embedded model (SmolLM2-135M, in-process), per pass.
3. The next reply on the embedded model, which shares one model and one lock
   with the pass: time to its first token with no pass running (the chat's
   prompt cached, or the pass's), with a pass step in flight (the reply gate
   cancels the step and asks it again after the reply), and the same with the
   gate turned off (the reply queues behind the step).

The conversation is one exchange that names an absent character (Wren), so
every step runs: summary, pair summary, memory, goal, descriptor,
familiarity, offscreen, offscreen memory/descriptor/goal, global memory.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import asyncio
import os
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))

from omoide.characters.library import find_character  # noqa: E402
from omoide.config.settings import Settings  # noqa: E402
from omoide.chat.events import ReplyDelta  # noqa: E402
from omoide.llm.base import Backend  # noqa: E402
from omoide.chat.session import ChatSession  # noqa: E402
from omoide.store import Store  # noqa: E402
from tests.faultserver import FaultServer, Request, stream_reply  # noqa: E402
from tests.scripted import ScriptedBackend  # noqa: E402
from tests.world_script import WorldScript  # noqa: E402

print = functools.partial(print, flush=True)  # noqa: A001 - figures appear as they are measured
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
            backend = OpenAICompatBackend(Settings(base_url=server.base_url, model="scripted").backend)
            elapsed, calls, failed = await one_pass(home, ScriptedBackend([[REPLY]]), backend, Settings(user_name="Kai"))
            await backend.aclose()
            times.append(elapsed)
        print(f"  scripted server: {statistics.median(times) * 1000:.0f} ms per pass (median of {runs}; {calls} LLM calls, {failed} failed)")
    finally:
        await server.stop()
    return times


async def embedded(home: Path, runs: int, *, passes: bool = True, reply_pass_tokens: int = 350) -> None:
    from omoide.llm.local import LocalBackend

    settings = Settings(user_name="Kai", max_tokens=48, temperature=0.0, context_size=2048)
    model = LocalBackend(settings)
    await model.load()
    times, fails, calls = [], [], 0
    for _ in range(runs if passes else 0):
        elapsed, calls, failed = await one_pass(home, ScriptedBackend([[REPLY]]), model, settings)
        times.append(elapsed)
        fails.append(failed)
        print(f"  embedded model:  {elapsed:.1f} s for one pass ({calls} LLM calls, {failed} failed validation)")
    if times:
        print(f"  embedded model:  {statistics.median(times):.1f} s per pass (median of {runs})")
    settings = settings.updated(world_max_tokens=reply_pass_tokens)

    # The next reply, on the same model as the pass. Three cases per run:
    #   cold:      the pass has finished; the model's cache holds the pass's last prompt, not the chat's
    #   gate:      a pass step is in flight when the reply starts (what omoide does)
    #   no gate:   the same, with the gate turned off: the reply queues behind the step for the model
    async with await Store.open(home / "reply.db") as store:
        session = await ChatSession.open(store, find_character("suzune"), settings, model, summarizer=model)
        figures: dict[str, list[float]] = {"warm": [], "cold": [], "gate": [], "no gate": []}
        pass_times: list[float] = []

        async def first_token(text: str) -> float:
            start = time.perf_counter()
            first = float("nan")
            async for event in session.send(text):
                if isinstance(event, ReplyDelta) and first != first:
                    first = time.perf_counter() - start
            return first

        async def in_flight(case: str, i: int) -> None:
            await session.wait_for_memory_work()  # memory work steps aside too: only the pass's step may be in flight
            conversation = await session.end_conversation(background=False)
            started = time.perf_counter()
            task = asyncio.create_task(session.world.run(conversation.id))
            while not session.gate._background:  # a step is on the model
                await asyncio.sleep(0.005)
            await asyncio.sleep(0.5)
            figures[case].append(await first_token(f"Wait, one more thing ({case}, {i})."))
            await task
            if case == "gate":
                pass_times.append(time.perf_counter() - started)

        for i in range(runs):
            await first_token(f"Tell me about the blend, take {i}.")
            figures["warm"].append(await first_token(f"And the cups, take {i}?"))
            conversation = await session.end_conversation(background=False)
            await session.world.run(conversation.id)
            figures["cold"].append(await first_token(f"Back again, take {i}."))
            await in_flight("gate", i)
            real_reply = session.gate.reply
            session.gate.reply = contextlib.asynccontextmanager(_no_gate)  # type: ignore[method-assign,assignment]
            await in_flight("no gate", i)
            session.gate.reply = real_reply  # type: ignore[method-assign]
        await session.aclose()
    labels = {
        "warm": "no pass, the chat's prompt cached      ",
        "cold": "no pass, cache holds the pass's prompt ",
        "gate": "pass step in flight (the gate)         ",
        "no gate": "pass step in flight, gate turned off   ",
    }
    for case, label in labels.items():
        print(f"  next reply, first token, {label} {statistics.median(figures[case]) * 1000:6.0f} ms (median of {runs})")
    print(f"  steps cut short for a reply and asked again: {session.gate.preempted}; "
          f"a pass with a reply in its middle: {statistics.median(pass_times):.1f} s")


async def _no_gate() -> AsyncIterator[None]:
    yield


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--no-model", action="store_true", help="Skip the embedded model.")
    parser.add_argument("--replies-only", action="store_true", help="On the embedded model, only the next-reply figures.")
    parser.add_argument("--reply-pass-tokens", type=int, default=350,
                        help="world_max_tokens of the pass running under the reply (smaller: a shorter run, same test).")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["OMOIDE_HOME"] = tmp
        home = Path(tmp)
        print("End-of-conversation pass (one exchange naming an absent character):")
        if not args.replies_only:
            await scripted_server(home, args.runs)
        if not args.no_model:
            await embedded(home, args.runs, passes=not args.replies_only, reply_pass_tokens=args.reply_pass_tokens)


if __name__ == "__main__":
    asyncio.run(main())
