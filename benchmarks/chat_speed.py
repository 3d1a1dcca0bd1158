"""Opening a chat and typing in it, as a user meets them: `omoide chat` itself
in a real terminal (tmux 160x50; see terminal.py).

    python benchmarks/chat_speed.py [--sizes 0 100000] [--runs 5] [--keys 40]

For an empty chat (0: only the greeting) and each other size, in a fresh data
directory: the time from launching `omoide chat` to the chat's last message
drawn; from Ctrl+Home to its first message drawn; the process's peak resident
memory. Then the first turn of a session: from Enter on a message to the
reply's first words drawn, against a server that answers at once
(paced_server.py), so what is timed is omoide's own work before the request
(the prompt, the memories that come to mind at that size: the big chat's
messages have no stored vectors yet, as an imported chat's), and the peak
resident memory then. Medians of `--runs` launches, the sizes taking turns launch by launch.
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
from terminal import TerminalFigures, bytecode, load, run_chat, run_first_reply, without_bytecode  # noqa: E402
from typing_latency import measure as measure_typing  # noqa: E402
from typing_latency import p95, start_server  # noqa: E402

TARGETS = {"empty": 0.5, "big": 1.0, "ratio": 1.25, "top": 0.3, "rss": 120.0, "typing": 0.030, "first_turn": 1.0}
REPLY = "rain tea lamp"
"""The paced server's reply begins with these words (paced_server.WORDS)."""


def chat_home(stack: contextlib.ExitStack, n: int, base_url: str | None = None) -> str:
    """A fresh data directory holding a chat of `n` messages besides the
    greeting (0: the greeting alone); answered by the server at `base_url`, if given."""
    home = stack.enter_context(tempfile.TemporaryDirectory())
    os.environ["OMOIDE_HOME"] = home
    config = Path(home) / "config" / "config.toml"
    config.parent.mkdir(parents=True)
    # No first-run screen nor probe (a model server another user runs here): neither may cover the chat.
    backend = f'[backend]\nbase_url = "{base_url}"\nmodel = "paced"\ntools = "inline"\n' if base_url else ""
    config.write_text(backend + "[ui]\nwelcomed = true\n[models]\ndiscover_servers = []\n")
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


def first_turns(sizes: list[int], runs: int) -> dict[int, list[tuple[float, float]]]:
    """`runs` first turns per size, each in a fresh data directory (a session's first
    turn in a chat it has never answered in: nothing of it is cached), sizes taking turns."""
    server, base_url = start_server(1000.0, 20, 60)
    try:
        figures: dict[int, list[tuple[float, float]]] = {n: [] for n in sizes}
        for _ in range(runs):
            for n in sizes:
                with contextlib.ExitStack() as stack:
                    home = chat_home(stack, n, base_url)
                    figures[n].append(run_first_reply(home, last=LAST if n else FIRST, reply=REPLY))
        return figures
    finally:
        server.terminate()
        server.wait()


def verdict(value: float, target: float) -> str:
    return "met" if value <= target else "NOT met"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[0, 100_000])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--keys", type=int, default=40)
    parser.add_argument("--first-turns", type=int, default=3, help="first turns timed per size (0: none)")
    parser.add_argument("--rate", type=float, default=200.0)
    parser.add_argument("--no-bytecode", action="store_true",
                        help="launch without omoide's bytecode (an editable install under PYTHONDONTWRITEBYTECODE=1)")
    args = parser.parse_args()
    print(without_bytecode() if args.no_bytecode else bytecode())
    before = load()
    rows = open_chats(args.sizes, args.runs)
    turns = first_turns(args.sizes, args.first_turns) if args.first_turns else {}
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
    if turns:
        print()
        print("| messages | a session's first turn: Enter to the reply's first words drawn | peak RSS then |")
        print("| ---: | ---: | ---: |")
        first = {n: statistics.median(t for t, _ in figures) for n, figures in turns.items()}
        for n, figures in turns.items():
            label = f"{n:,}" if n else "empty (greeting only)"
            print(f"| {label} | {first[n] * 1000:.0f} ms | {max(r for _, r in figures):.0f} MiB |")
        gap = first[max(first)] - first[min(first)]
        print(f"target: {max(first):,} messages' first turn {gap * 1000:+.0f} ms against the empty chat's, "
              f"within {TARGETS['first_turn']:.0f} s {verdict(gap, TARGETS['first_turn'])}")
    if latencies:
        from typing_latency import report

        print(report(latencies, args.rate) + f"; p95 <= {TARGETS['typing'] * 1000:.0f} ms "
              f"{verdict(p95(latencies), TARGETS['typing'])}")


if __name__ == "__main__":
    main()
