"""Reply latency with memo work running in the background vs none at all, on a
real llama_cpp.server running the shipped SmolLM2 (chat and summarizer on the
same server, the hardest case: it answers one request at a time).

    python benchmarks/memo_latency.py [--turns 16] [--pause 0 3] [--server URL]

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
from omoide.config import Settings  # noqa: E402
from omoide.events import ReplyFinished  # noqa: E402
from omoide.llm.openai_compat import OpenAICompatBackend  # noqa: E402
from omoide.session import ChatSession  # noqa: E402
from omoide.store import Store  # noqa: E402

MIKA = Character(id="mika", name="Mika", first_message="Welcome to my bakery!", description="Mika runs a small bakery by the station.")


def start_server() -> tuple[subprocess.Popen[bytes], str]:
    from omoide.llm.model_file import smollm2_path

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    command = [sys.executable, "-m", "llama_cpp.server", "--model", str(smollm2_path()), "--model_alias", "smollm2",
               "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "2048", "--n_threads", "2"]
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}/v1"
    for _ in range(240):
        try:
            if httpx.get(f"{base}/models", timeout=2).status_code == 200:
                return proc, base
        except httpx.HTTPError:
            time.sleep(0.5)
    proc.kill()
    raise SystemExit("llama_cpp.server did not start")


async def run(base: str, mode: str, turns: int, pause: float, verbose: bool = False) -> list[float]:
    settings = Settings(base_url=base, model="smollm2", max_tokens=32, temperature=0.0, context_size=2048,
                        memory_style="memos", user_name="Kai")
    backend = OpenAICompatBackend(settings)
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
    parser.add_argument("--server", help="an OpenAI-compatible server serving 'smollm2' (default: start llama_cpp.server)")
    args = parser.parse_args()
    proc, base = (None, args.server) if args.server else start_server()
    try:
        with tempfile.TemporaryDirectory() as home:  # warm the server up (model pages, first prompt)
            os.environ["OMOIDE_HOME"] = home
            asyncio.run(run(base, "none", 3, 0.0))
        print(f"reply latency over {args.turns} turns (send -> whole reply stored), SmolLM2 on llama_cpp.server, one server:")
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
