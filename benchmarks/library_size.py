"""What a big library of characters costs the commands that use one of them.

    python benchmarks/library_size.py [--sizes 2,10000] [--large 12] [--runs 3]

For each size, a throw-away home with that many small character folders
(and, with `--large N`, another home of N cards with 2 MB descriptions),
then, side by side: `omoide say alice "Hello."` (wall time of the process,
against benchmarks/paced_server.py streaming a 20-token reply, the same for
every size), `omoide chat`'s first paint (benchmarks/open_chat.py: a fresh
process to the first painted screen, headless) and `omoide characters list`
(wall time, output discarded). Each is the median of `--runs` runs after one
command has indexed the library; that first command is shown on its own.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from paced_server import PacedServer  # noqa: E402

OPEN_CHAT = str(Path(__file__).with_name("open_chat.py"))


def build_home(home: Path, cards: int, description_chars: int = 80) -> None:
    folder = home / "data" / "characters"
    for i in range(cards):
        card = folder / f"c{i:05d}"
        card.mkdir(parents=True)
        description = (f"Card {i} keeps a small shop by the harbour. " * (description_chars // 40 + 1))[:description_chars]
        (card / "character.toml").write_text(f'name = "Card {i}"\ndescription = "{description}"\nfirst_message = "Hello."\n')
    alice = folder / "alice"
    alice.mkdir(parents=True)
    (alice / "character.toml").write_text('name = "Alice"\ndescription = "Alice keeps the lighthouse."\nfirst_message = "Hi."\n')


def serve() -> str:
    """The paced server on a thread of its own; returns its base URL."""
    server = PacedServer(rate=10_000, tokens=20, paragraph=0)
    ready = threading.Event()

    def run() -> None:
        async def main() -> None:
            await server.start()
            ready.set()
            await asyncio.Event().wait()

        asyncio.run(main())

    threading.Thread(target=run, daemon=True).start()
    ready.wait(30)
    return server.base_url


def timed(args: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    result = subprocess.run(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=600)
    took = time.perf_counter() - start
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(args[2:])} failed: {result.stderr[-2000:]}")
    return took


def first_paint(env: dict[str, str]) -> float:
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, OPEN_CHAT], stdout=subprocess.PIPE, text=True, env=env)
    assert proc.stdout is not None
    painted = -1.0
    for line in proc.stdout:
        if line.startswith("opened"):
            painted = time.perf_counter() - start
            break
    proc.wait()
    if painted < 0:
        raise SystemExit("omoide chat did not paint")
    return painted


def median(runs: int, measure: Callable[[], float]) -> float:
    return statistics.median(measure() for _ in range(runs))


def measure(label: str, home: Path, base_url: str, runs: int) -> dict[str, float]:
    env = {**os.environ, "OMOIDE_HOME": str(home), "OMOIDE_BASE_URL": base_url, "OMOIDE_MODEL": "paced",
           "OMOIDE_USER_NAME": "Kai", "OMOIDE_WELCOMED": "true", "OMOIDE_DISCOVER_SERVERS": "[]"}
    omoide = [sys.executable, "-m", "omoide.cli.app"]
    figures = {"first command (indexing)": timed([*omoide, "characters", "list"], env)}
    figures["omoide say"] = median(runs, lambda: timed([*omoide, "say", "alice", "Hello."], env))
    figures["omoide chat first paint"] = median(runs, lambda: first_paint(env))
    figures["characters list"] = median(runs, lambda: timed([*omoide, "characters", "list"], env))
    print(f"  {label}: " + ", ".join(f"{k} {v:.2f} s" for k, v in figures.items()), flush=True)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="2,10000", help="library sizes, comma-separated (the first is the baseline)")
    parser.add_argument("--large", type=int, default=0, help="also a library of this many cards with 2 MB descriptions")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    base_url = serve()
    results: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="omoide-library-") as root:
        libraries = [(f"{int(n):,} cards", int(n), 80) for n in args.sizes.split(",")]
        libraries += [(f"{args.large} large cards", args.large, 2_000_000)] if args.large else []
        for label, cards, chars in libraries:
            home = Path(root) / label.replace(" ", "-")
            build_home(home, cards, chars)
            results[label] = measure(label, home, base_url, args.runs)
    labels = list(results)
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; medians of {args.runs}")
    print(f"{'':28}" + "".join(f"{label:>18}" for label in labels) + f"{'ratio':>10}")
    for figure in results[labels[0]]:
        base = results[labels[0]][figure]
        row = "".join(f"{results[label][figure]:>17.2f}s" for label in labels)
        ratio = "  ".join(f"{results[label][figure] / base:.2f}x" for label in labels[1:])
        print(f"{figure:28}{row}  {ratio}")


if __name__ == "__main__":
    main()
