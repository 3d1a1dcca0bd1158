"""Opening a chat and typing in it, as a user meets them: `omoide chat` itself
in a real terminal (tmux 160x50; see terminal.py).

    python benchmarks/chat_speed.py [--sizes 0 100000] [--runs 5] [--keys 40]

For an empty chat (0: only the greeting) and each other size, in a fresh data
directory: the time from launching `omoide chat` to the chat's last message
drawn; from Ctrl+Home to its first message drawn; the process's peak resident
memory. Medians of `--runs` launches, the sizes taking turns launch by launch.
omoide's modules are compiled first, as a user's first launch leaves them
(`--no-bytecode`: every launch compiles them; see terminal.py). Then typing
while a reply streams at 200 tokens/s (typing_latency.py). Each figure is
printed next to its target and the machine's load average: on a shared
machine the times move with it.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[1]))

from long_chats import FIRST, LAST, add_last_message  # noqa: E402
from make_chat import make_chat  # noqa: E402
from terminal import TerminalFigures, bytecode, load, run_chat, without_bytecode  # noqa: E402
from typing_latency import measure as measure_typing  # noqa: E402
from typing_latency import p95  # noqa: E402

TARGETS = {"empty": 0.5, "big": 1.0, "ratio": 1.25, "top": 0.3, "rss": 120.0, "typing": 0.050}


def chat_home(stack: contextlib.ExitStack, n: int) -> str:
    """A fresh data directory holding a chat of `n` messages besides the
    greeting (0: the greeting alone)."""
    home = stack.enter_context(tempfile.TemporaryDirectory())
    os.environ["OMOIDE_HOME"] = home
    config = Path(home) / "config" / "config.toml"
    config.parent.mkdir(parents=True)
    # No first-run screen nor probe (a model server another user runs here): neither may cover the chat.
    config.write_text("[ui]\nwelcomed = true\n[models]\ndiscover_servers = []\n")
    chat_id = asyncio.run(make_chat(max(n - 1, 1)))
    if n:
        asyncio.run(add_last_message(chat_id))
    return home


def open_chats(sizes: list[int], runs: int) -> dict[int, list[TerminalFigures]]:
    """`runs` launches per size, the sizes taking turns, so a change in the
    machine's speed during the run moves every size alike (their ratio is a target)."""
    with contextlib.ExitStack() as stack:
        homes = {n: chat_home(stack, n) for n in sizes}
        figures: dict[int, list[TerminalFigures]] = {n: [] for n in sizes}
        for _ in range(runs):
            for n in sizes:
                figures[n].append(run_chat(homes[n], last=LAST if n else FIRST, first=FIRST))
        return figures


def verdict(value: float, target: float) -> str:
    return "met" if value <= target else "NOT met"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[0, 100_000])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--keys", type=int, default=40)
    parser.add_argument("--rate", type=float, default=200.0)
    parser.add_argument("--no-bytecode", action="store_true",
                        help="launch without omoide's bytecode (an editable install under PYTHONDONTWRITEBYTECODE=1)")
    args = parser.parse_args()
    print(without_bytecode() if args.no_bytecode else bytecode())
    before = load()
    rows = open_chats(args.sizes, args.runs)
    latencies = measure_typing(args.keys, args.rate) if args.keys else []
    print(f"machine: {before} before, {load()} after")
    print("| messages | launch to last message drawn | Ctrl+Home to first message drawn | peak RSS |")
    print("| ---: | ---: | ---: | ---: |")
    paint: dict[int, float] = {}
    for n, figures in rows.items():
        paint[n] = statistics.median(f.paint for f in figures)
        top = statistics.median(f.jump for f in figures)
        peak = max(f.rss_peak for f in figures)
        label = f"{n:,}" if n else "empty (greeting only)"
        print(f"| {label} | {paint[n] * 1000:.0f} ms | {top * 1000:.0f} ms | {peak:.0f} MiB |")
    print()
    small, big = min(paint), max(paint)
    print(f"targets: empty chat {paint[small]:.2f} s <= {TARGETS['empty']} s {verdict(paint[small], TARGETS['empty'])}; "
          f"{big:,} messages {paint[big]:.2f} s <= {TARGETS['big']} s {verdict(paint[big], TARGETS['big'])}, "
          f"{paint[big] / paint[small]:.2f}x the empty chat <= {TARGETS['ratio']}x {verdict(paint[big] / paint[small], TARGETS['ratio'])}; "
          f"Ctrl+Home worst median {max(statistics.median(f.jump for f in fs) for fs in rows.values()):.2f} s <= {TARGETS['top']} s; "
          f"peak RSS {max(f.rss_peak for fs in rows.values() for f in fs):.0f} MiB <= {TARGETS['rss']:.0f} MiB")
    if latencies:
        from typing_latency import report

        print(report(latencies, args.rate) + f"; p95 < {TARGETS['typing'] * 1000:.0f} ms "
              f"{verdict(p95(latencies), TARGETS['typing'])}")


if __name__ == "__main__":
    main()
