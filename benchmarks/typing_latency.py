"""Typing while a reply streams fast, in a real terminal (tmux 160x50).

    python benchmarks/typing_latency.py [--keys 40] [--rate 200] [--spacing 0.25]

`paced_server.py` streams a long reply at `--rate` tokens per second; while it
streams, one key at a time is sent with `tmux send-keys`, and the clock runs
until the composer (the screen's last lines, read with `capture-pane`) shows
it. Presses are `--spacing` seconds apart, so they sample the reply as it
grows (40 keys: the first 10 s, about 2,000 tokens). The figure includes
tmux's own round trips (a few ms each). Prints the median, p95 and worst.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from terminal import POLL, load, tmux_launch, tmux_screen, tmux_send, tmux_stop  # noqa: E402

KEYS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
PREFIX = "~~"
"""Typed and waited for before the clock runs, so every measured text is unique on screen."""


def _bottom(session: str) -> str:
    return "\n".join(tmux_screen(session).splitlines()[-4:])


def _wait(session: str, text: str, *, bottom: bool = False, timeout: float = 30.0) -> float:
    deadline = time.perf_counter() + timeout
    while time.perf_counter() < deadline:
        if text in (_bottom(session) if bottom else tmux_screen(session)):
            return time.perf_counter()
        time.sleep(POLL / 5)
    raise SystemExit(f"'{text}' never appeared on screen; the screen was:\n{tmux_screen(session)}")


def start_server(rate: float, tokens: int, paragraph: int) -> tuple[subprocess.Popen[str], str]:
    server = subprocess.Popen(
        [sys.executable, str(Path(__file__).with_name("paced_server.py")), "--rate", str(rate), "--tokens", str(tokens),
         "--paragraph", str(paragraph)],
        stdout=subprocess.PIPE, text=True,
    )
    assert server.stdout is not None
    line = server.stdout.readline()  # "streaming N tokens at R/s on URL"
    return server, line.split()[-1]


def measure(keys: int, rate: float, spacing: float = 0.25, paragraph: int = 60) -> list[float]:
    tokens = int(rate * 60)  # a minute of streaming: far longer than the typing takes
    server, base_url = start_server(rate, tokens, paragraph)
    try:
        with tempfile.TemporaryDirectory() as home:
            config = Path(home) / "config" / "config.toml"
            config.parent.mkdir(parents=True)
            # max_tokens: the whole paced reply, or the client's cap on a server that ignores it
            # cuts the reply before the typing ends; welcomed: no first-run screen over the chat.
            # In sections: a flat key is read, but a notice saying where it belongs covers the screen.
            config.write_text(f'[backend]\nbase_url = "{base_url}"\nmodel = "paced"\ntools = "inline"\nmax_tokens = {tokens}\n'
                              '[ui]\nwelcomed = true\n[models]\ndiscover_servers = []\n')
            session = tmux_launch(home, ("chat", "suzune"))
            try:
                _wait(session, "good memory")  # the greeting: the chat is open
                tmux_send(session, "go", literal=True)
                tmux_send(session, "Enter")
                _wait(session, "writing…")
                _wait(session, "rain tea lamp")  # the reply is streaming
                tmux_send(session, PREFIX, literal=True)
                _wait(session, PREFIX, bottom=True)
                typed = PREFIX
                latencies = []
                for i in range(keys):
                    key = KEYS[i % len(KEYS)]
                    typed += key
                    t0 = time.perf_counter()
                    tmux_send(session, key, literal=True)
                    latencies.append(_wait(session, typed, bottom=True) - t0)
                    time.sleep(spacing)
                if "writing…" not in tmux_screen(session):
                    raise SystemExit("the reply ended before the typing did: raise the token count")
                return latencies
            finally:
                tmux_stop(session)
    finally:
        server.terminate()
        server.wait()


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def report(latencies: list[float], rate: float) -> str:
    return (f"typing while a reply streams at {rate:g} tokens/s: key press to character shown, "
            f"median {statistics.median(latencies) * 1000:.0f} ms, p95 {p95(latencies) * 1000:.0f} ms, "
            f"worst {max(latencies) * 1000:.0f} ms ({len(latencies)} keys)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keys", type=int, default=40)
    parser.add_argument("--rate", type=float, default=200.0)
    parser.add_argument("--spacing", type=float, default=0.25)
    parser.add_argument("--paragraph", type=int, default=60, help="tokens per paragraph of the reply (0: one paragraph)")
    args = parser.parse_args()
    before = load()
    latencies = measure(args.keys, args.rate, args.spacing, args.paragraph)
    print(f"machine: {before} before, {load()} after")
    print(report(latencies, args.rate))


if __name__ == "__main__":
    main()
