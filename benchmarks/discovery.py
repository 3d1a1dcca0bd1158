"""What looking for local model servers costs, and whether start-up feels it.

    python benchmarks/discovery.py

- discovery of the seven well-known ports as this machine has them (usually
  nothing listening: every probe is refused at once);
- seven fake servers answering (Ollama's /api/tags and /v1/models);
- the same with a hung server among them (accepts, never answers): bounded by
  discover_timeout (0.5 s by default);
- `omoide chat`'s first paint with discovery on (the default) and off: the
  TUI probes in a worker after the first paint, so the two should match;
- `omoide models` and `omoide doctor` with two servers of 10,000 model names
  each: wall time of the whole command and bytes printed (the listing is
  capped per server, so both should stay small).
"""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

OPEN_CHAT = str(Path(__file__).with_name("open_chat.py"))


def timed(addresses: list[str] | None, runs: int = 9, timeout: float = 0.5) -> tuple[float, int]:
    from omoide.models.discovery import discover

    times, found = [], 0
    for _ in range(runs):
        start = time.perf_counter()
        found = len(asyncio.run(discover(addresses, timeout=timeout)))
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000, found


def first_paint(discovery: bool, runs: int = 5) -> float:
    paints = []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as home:
            env = {**os.environ, "OMOIDE_HOME": home}
            env.pop("OMOIDE_DISCOVER_SERVERS", None)
            if not discovery:
                env["OMOIDE_DISCOVER_SERVERS"] = "[]"
            out = subprocess.run([sys.executable, OPEN_CHAT], capture_output=True, text=True, env=env, check=True).stdout
            paints.append(float(next(line for line in out.splitlines() if line.startswith("opened")).split()[1]))
    return statistics.median(paints) * 1000


def many_names(count: int = 10_000, runs: int = 3) -> None:
    from contextlib import ExitStack

    from tests.fakeservers import address, http_server, ollama, openai_models

    names = [f"model-{i:05d}:7b" for i in range(count)]
    with ExitStack() as stack, tempfile.TemporaryDirectory() as home:
        servers = [address(stack.enter_context(http_server(ollama(*names)))),
                   address(stack.enter_context(http_server(openai_models(*names))))]
        env = {**os.environ, "OMOIDE_HOME": home, "OMOIDE_DISCOVER_SERVERS": repr(servers).replace("'", '"'),
               "OMOIDE_DISCOVER_TIMEOUT": "30", "COLUMNS": "120"}
        for command in ("models", "doctor"):
            times, size = [], 0
            for _ in range(runs):
                start = time.perf_counter()
                out = subprocess.run([sys.executable, "-m", "omoide.cli.app", command], capture_output=True, env=env).stdout
                times.append(time.perf_counter() - start)
                size = len(out)
            print(f"omoide {command}, 2 servers x {count:,} names: {statistics.median(times):.2f} s, "
                  f"{size:,} bytes printed (median of {runs}; load average {os.getloadavg()[0]:.1f})")


def main() -> None:
    from contextlib import ExitStack

    from tests.fakeservers import address, http_server, ollama, silent_server

    ms, found = timed(None)
    print(f"well-known ports on this machine ({found} answered): {ms:.1f} ms (median of 9)")
    with ExitStack() as stack:
        servers = [address(stack.enter_context(http_server(ollama(f"model-{i}")))) for i in range(7)]
        ms, found = timed(servers)
        print(f"7 fake servers answering ({found} found): {ms:.1f} ms")
        hung = stack.enter_context(silent_server())
        ms, found = timed([*servers, hung], runs=3)
        print(f"7 answering + 1 hung ({found} found), timeout 0.5 s: {ms:.1f} ms")
    many_names()
    on, off = first_paint(True), first_paint(False)
    print(f"omoide chat first paint, in-process: discovery on {on:.0f} ms, off {off:.0f} ms (median of 5)")


if __name__ == "__main__":
    main()
