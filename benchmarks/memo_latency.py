"""Reply latency with memo work running in the background vs none at all.

    python benchmarks/memo_latency.py --simulated [--turns 48] [--pause 0 3]
    python benchmarks/memo_latency.py [--turns 16] [--pause 0 3] [--server URL]

--simulated: models that take the seed's times (a reply 2 s, a memo 3 s), so the
figure is the design's and not the machine's: the chat and the summarizer on
separate servers, or on one server that answers one request at a time (like
llama.cpp's server), each with the real ChatSession, store and memory worker.
Without it: llama.cpp's own server (tests/engine_server.py) running the shipped SmolLM2 for both, the
hardest case (slow and noisy on a loaded machine).

Three runs of the same scripted user turns, each in a fresh chat, all with
memory_style 'memos' (so the raw window is the same size):
- no memo work: the background worker switched off;
- memos in the background: memory_style 'memos', a memo every 8 messages;
- memos awaited before the reply counts as done (the seed's first, synchronous design).
`--pause` is the user's think time between turns; 0 sends the next message the
moment a reply ends, so background work competes with it as hard as it can.
Prints the median and p95 time from sending to the whole reply stored.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).parent))
from make_chat import WORDS  # noqa: E402

from omoide.characters.model import Character  # noqa: E402
from omoide.llm.base import Done, TextDelta  # noqa: E402
from omoide.config.settings import Settings  # noqa: E402
from omoide.chat.events import ReplyFinished  # noqa: E402
from omoide.llm.openai_compat import OpenAICompatBackend  # noqa: E402
from omoide.chat.session import ChatSession  # noqa: E402
from omoide.store import Store  # noqa: E402

MIKA = Character(id="mika", name="Mika", first_message="Welcome to my bakery!", description="Mika runs a small bakery by the station.")


class TimedModel:
    """A model that takes `seconds` per request; with a shared `slot`, one request at a time."""

    name = "timed"
    model = "timed"
    supports_tools = False

    def __init__(self, seconds: float, slot: asyncio.Lock | None = None) -> None:
        self.seconds = seconds
        self.slot = slot

    async def stream(self, messages, *, tools=None, tool_choice=None, max_tokens=None, cache_key=None):  # type: ignore[no-untyped-def]
        memo = "Journey Highlights" in str(messages[0].get("content", ""))
        async with self.slot or _NoSlot():
            await asyncio.sleep(self.seconds)
        yield TextDelta("【Highlight 1】: Kai and Mika shared a quiet moment at the bakery." if memo else "*smiles* Mm.")
        yield Done("stop")

    async def count_tokens(self, messages):  # type: ignore[no-untyped-def]
        from omoide.llm.base import estimate_tokens

        return estimate_tokens(messages)

    async def check(self) -> str:
        return "timed"

    async def aclose(self) -> None:
        pass


class _NoSlot:
    async def __aenter__(self) -> None:
        return None

    async def __aexit__(self, *exc: object) -> None:
        return None


async def simulated(mode: str, turns: int, pause: float, *, one_server: bool) -> list[float]:
    settings = Settings(memory_style="memos", user_name="Kai")
    slot = asyncio.Lock() if one_server else None
    store = await Store.open()
    session = await ChatSession.open(store, MIKA, settings, TimedModel(2.0, slot), summarizer=TimedModel(3.0, slot))  # type: ignore[arg-type]
    if mode == "none":
        session.memory_worker.schedule = lambda head_id: None  # type: ignore[method-assign]
    times = []
    for turn in range(turns):
        started = time.perf_counter()
        async for _ in session.send(f"Turn {turn}"):
            pass
        if mode == "sync":
            await session.wait_for_memory_work()
        times.append(time.perf_counter() - started)
        if pause:
            await asyncio.sleep(pause)
    await session.wait_for_memory_work()
    await store.close()
    return times


def print_simulated(turns: int, pauses: list[float]) -> None:
    print(f"reply latency over {turns} turns (send -> whole reply stored); a reply takes 2 s, a memo 3 s:")
    for one_server in (False, True):
        for pause in pauses:
            for mode, label in (("none", "no memo work"), ("background", "memos in the background"), ("sync", "memos awaited (synchronous)")):
                if mode == "sync" and pause != pauses[0]:
                    continue
                with tempfile.TemporaryDirectory() as home:
                    os.environ["OMOIDE_HOME"] = home
                    times = asyncio.run(simulated(mode, turns, pause, one_server=one_server))
                where = "one server    " if one_server else "two servers   "
                print(f"  {where} think time {pause:.0f} s  {label:<30} median {statistics.median(times):5.2f} s   p95 {p95(times):5.2f} s", flush=True)


def start_server() -> tuple[subprocess.Popen[bytes], str]:
    from omoide.llm.model_file import smollm2_path

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    command = [sys.executable, str(Path(__file__).parents[1] / "tests" / "engine_server.py"), str(smollm2_path()), str(port),
               "--context", "2048", "--slots", "1", "--threads", "1"]
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}/v1"
    for _ in range(240):
        try:
            if httpx.get(f"{base}/models", timeout=2).status_code == 200:
                return proc, base
        except httpx.HTTPError:
            time.sleep(0.5)
    proc.kill()
    raise SystemExit("the engine server did not start")


async def run(base: str, mode: str, turns: int, pause: float, verbose: bool = False) -> list[float]:
    settings = Settings(base_url=base, model="smollm2", max_tokens=32, temperature=0.0, context_size=2048,
                        memory_style="memos", user_name="Kai")
    backend = OpenAICompatBackend(settings.backend.kind)
    store = await Store.open()
    session = await ChatSession.open(store, MIKA, settings, backend)
    if mode == "none":
        session.memory_worker.schedule = lambda head_id: None  # type: ignore[method-assign]
    times: list[float] = []
    finished: ReplyFinished | None = None
    for turn in range(turns):
        text = " ".join(WORDS[(turn * 3 + i) % len(WORDS)] for i in range(10)).capitalize() + "?"
        started = time.perf_counter()
        async for event in session.send(text):
            if isinstance(event, ReplyFinished):
                finished = event
        if mode == "sync":
            await session.wait_for_memory_work()
        times.append(time.perf_counter() - started)
        if verbose:
            print(f"      turn {turn + 1}: {times[-1]:.2f} s, {len(finished.message.content) if finished else 0} chars", flush=True)
        if pause:
            await asyncio.sleep(pause)
    await session.wait_for_memory_work()
    made = len([m for m in await session.book.pages() if not m.gap])
    await store.close()
    await backend.aclose()
    print(f"    ({made} memos made)", flush=True)
    return times


def p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20)[-1] if len(values) >= 2 else values[0]


def main() -> None:
    parser = argparse.ArgumentParser(description="Reply latency with and without memo work.")
    parser.add_argument("--turns", type=int, default=16)
    parser.add_argument("--pause", type=float, nargs="+", default=[0.0, 3.0], help="think time between turns, seconds")
    parser.add_argument("--verbose", action="store_true", help="print every turn's time")
    parser.add_argument("--simulated", action="store_true", help="models with fixed times instead of a real server")
    parser.add_argument("--server", help="an OpenAI-compatible server serving 'smollm2' (default: start llama.cpp's server)")
    args = parser.parse_args()
    if args.simulated:
        print_simulated(args.turns, args.pause)
        return
    proc, base = (None, args.server) if args.server else start_server()
    try:
        with tempfile.TemporaryDirectory() as home:  # warm the server up (model pages, first prompt)
            os.environ["OMOIDE_HOME"] = home
            asyncio.run(run(base, "none", 3, 0.0))
        print(f"reply latency over {args.turns} turns (send -> whole reply stored), SmolLM2 on llama.cpp's server, one server:")
        for pause in args.pause:
            for mode, label in (("none", "no memo work"), ("background", "memos in the background"), ("sync", "memos awaited (synchronous)")):
                with tempfile.TemporaryDirectory() as home:
                    os.environ["OMOIDE_HOME"] = home
                    times = asyncio.run(run(base, mode, args.turns, pause, args.verbose))
                print(f"  think time {pause:.0f} s, {label:<30} median {statistics.median(times):6.2f} s   p95 {p95(times):6.2f} s", flush=True)
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(timeout=10)


if __name__ == "__main__":
    main()
