"""`omoide say` with 2,000 pins and a chat holding 3,000 corrections, against
a chat as long with none (3,000 lines of yours that correct nothing): the request's size and the time of a `say`, each the
median of a few runs against a local server that answers at once.

    python benchmarks/crowded_prompt.py [--runs 3]

Before the budgets of memory/prompt/budget.py the crowded request was about
1 MB at an 8,192-token context and a `say` took 13-16 s.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

REPLY = b"".join(f"data: {json.dumps(c)}\n\n".encode() for c in (
    {"choices": [{"index": 0, "delta": {"content": "Mm."}, "finish_reason": None}]},
    {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})) + b"data: [DONE]\n\n"


class Server(ThreadingHTTPServer):
    daemon_threads = True
    sizes: list[int]


class Handler(BaseHTTPRequestHandler):
    server: Server

    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:  # noqa: N802
        body = self.rfile.read(int(self.headers.get("content-length", "0")))
        if self.path.endswith("/chat/completions") and b"Which lantern" in body:
            self.server.sizes.append(len(body))
        self.send_response(200 if self.path.endswith("/chat/completions") else 404)
        payload = REPLY if self.path.endswith("/chat/completions") else b"{}"
        self.send_header("content-type", "text/event-stream")
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


async def crowd(db: Path, pins: int, corrections: int, lines: int) -> None:
    from omoide.domain.chat import PinSource, Role
    from omoide.store import Store

    store = await Store.open(db)
    try:
        for i in range(pins):
            await store.pins.add("suzune", f"Fact {i}: the lantern by door {i} is painted a colour of its own.", PinSource.TYPED)
        chat = await store.chats.create("suzune", greeting="Welcome back.")
        head = chat.head_id
        for i in range(lines):
            text = f"Actually my cat is Mochi{i} now, not Biscuit{i}." if i < corrections else f"My cat Mochi{i} sleeps."
            head = (await store.messages.add(chat.id, head, Role.USER, text)).id
            head = (await store.messages.add(chat.id, head, Role.ASSISTANT, "Noted.")).id
    finally:
        await store.close()


def run(pins: int, corrections: int, runs: int, lines: int = 3000) -> tuple[float, int]:
    server = Server(("127.0.0.1", 0), Handler)
    server.sizes = []
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with tempfile.TemporaryDirectory() as home:
            asyncio.run(crowd(Path(home) / "data" / "omoide.db", pins, corrections, lines))
            env = {**os.environ, "OMOIDE_HOME": home, "OMOIDE_DISCOVER_SERVERS": "[]", "OMOIDE_MODEL": "m",
                   "OMOIDE_BASE_URL": f"http://127.0.0.1:{server.server_address[1]}/v1"}
            times = []
            for _ in range(runs):
                start = time.perf_counter()
                subprocess.run([sys.executable, "-m", "omoide.cli.app", "say", "suzune", "Which lantern is red?"],
                               env=env, check=True, capture_output=True)
                times.append(time.perf_counter() - start)
    finally:
        server.shutdown()
    return statistics.median(times), max(server.sizes)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    plain, plain_size = run(0, 0, args.runs)
    crowded, crowded_size = run(2000, 3000, args.runs)
    print(f"`omoide say`, median of {args.runs}: {plain:.2f} s with no pins or corrections in 3,000 lines ({plain_size / 1024:.0f} KiB request), "
          f"{crowded:.2f} s with 2,000 pins and 3,000 corrections ({crowded_size / 1024:.0f} KiB request): {crowded / plain:.2f}x")


if __name__ == "__main__":
    main()
