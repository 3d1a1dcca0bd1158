"""Prefix-cache reuse on a real llama.cpp-style server, as the server itself reports it.

    python benchmarks/server_cache.py [--turns 41] [--threshold 20 40] [--max-tokens 400] [--recall-passages 0 3]
                                      [--cache-reuse 32] [--slots 4]

Starts llama.cpp's own server (the embedded engine over HTTP,
tests/engine_server.py) with the shipped SmolLM2-135M (8192 tokens a cache
slot; by default the embedded engine's slots, so memory work keeps a slot of
its own as it does there and on any llama.cpp server of several slots;
`--slots 1` leaves it the chat's), then for each summary threshold drives one chat through the real
`omoide say` process, one message per process, memory work included (`say`
waits for it). Between `say` and the server sits a small recording proxy: it
passes every byte through and keeps the `timings` the server sends at the end
of each reply (`cache_n`: prompt tokens taken from its cache, `prompt_n`:
prompt tokens evaluated). The first request of a turn is the chat's reply;
the rest are memory work.

Per turn, reuse = tokens the server took from its cache / tokens in the prompt
(cache_n / (cache_n + prompt_n)). Printed: mean and median over the turns after the
first, and token-weighted (sum of hits / sum of prompt tokens), for the chat's
replies; the same for the memory requests; and the prompt-to-prompt figure
(each reply prompt against the previous reply prompt, as the client renders
them with the model's template and tokenizer), which is what the server would
reuse if nothing else ever ran between two turns. `--recall-passages N ...`
runs each threshold once per [memory] recall_passages (0: no memories come to
mind; the default is 20), to see what the passages cost the cache.
`--cache-reuse` is the server's llama.cpp `--cache-reuse` (by default the
embedded engine's own, `CACHE_REUSE` in omoide/llm/engine.py; 0 is a stock
llama.cpp server, which reuses only the common prefix).

What this does not cover: other servers' cache policies (vLLM, the cloud
APIs' explicit caching), a scene's several speakers (`benchmarks/scenes.py --engine`), the
'memos' and 'both' memory styles, the world pass at a conversation's end
(it needs an idle chat or /end), and replies streamed through the TUI (the
same session code as `say`). SmolLM2-135M writes poor summaries: a rejected
one is retried after a later turn, and that request counts here as well.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from prefix import common_prefix  # benchmarks/ is on sys.path when this runs as a script

ROOT = Path(__file__).parents[1]
LINES = [
    "Good evening. Is the shrine still open?", "I brought you some tea from the city.",
    "What do you do here when nobody visits?", "The lanterns look beautiful tonight.",
    "Tell me about the festival next week.", "I had a long day at work, honestly.",
    "Do you remember what I told you about my sister?", "The rain is getting heavier.",
    "Can I help you sweep the steps?", "What is your favourite season, and why?",
    "I think someone was following me on the path.", "Let's sit by the pond for a while.",
    "My train leaves early tomorrow.", "Do you ever get lonely up here?",
    "I found an old charm under the bench.", "What would you wish for, if you could?",
]


@dataclass
class Request:
    hit: int
    total: int

    @property
    def share(self) -> float:
        return self.hit / self.total if self.total else 0.0


@dataclass
class Run:
    replies: list[Request] = field(default_factory=list)
    memory: list[Request] = field(default_factory=list)
    prompt_to_prompt: list[float] = field(default_factory=list)
    failed_memory: int = 0


class Recorder:
    """A pass-through HTTP proxy that keeps each streamed reply's `timings`."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream
        self.requests: list[Request] = []
        self.port = free_port()
        self.lock = threading.Lock()

    def take(self) -> list[Request]:
        with self.lock:
            taken, self.requests = self.requests, []
        return taken

    def serve(self) -> None:
        asyncio.run(self._serve())

    async def _serve(self) -> None:
        server = await asyncio.start_server(self._handle, "127.0.0.1", self.port)
        async with server:
            await server.serve_forever()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await self._relay(reader, writer)
        except ConnectionResetError:  # `omoide say` exits without closing its keep-alive connection
            pass

    async def _relay(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        async with httpx.AsyncClient(base_url=self.upstream, timeout=900) as client:
            while line := await reader.readline():
                method, path, _ = line.decode().split(" ", 2)
                headers: dict[str, str] = {}
                while (header := await reader.readline()) not in (b"\r\n", b"\n", b""):
                    name, _, value = header.decode().partition(":")
                    headers[name.strip().lower()] = value.strip()
                body = await reader.readexactly(int(headers.get("content-length", "0")))
                forward = {k: v for k, v in headers.items() if k in ("content-type", "accept", "authorization")}
                async with client.stream(method, path, content=body, headers=forward) as response:
                    writer.write(f"HTTP/1.1 {response.status_code} OK\r\nContent-Type: {response.headers.get('content-type', 'application/json')}"
                                 "\r\nTransfer-Encoding: chunked\r\n\r\n".encode())
                    seen = b""
                    async for chunk in response.aiter_raw():
                        seen += chunk
                        writer.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                        await writer.drain()
                    writer.write(b"0\r\n\r\n")
                    await writer.drain()
                self._record(seen)
        writer.close()

    def _record(self, body: bytes) -> None:
        for line in body.decode("utf-8", "replace").splitlines():
            data = line.removeprefix("data: ").strip()
            if '"timings"' not in data:
                continue
            try:
                timings = json.loads(data).get("timings") or {}
            except ValueError:
                continue
            if isinstance(timings.get("cache_n"), int) and isinstance(timings.get("prompt_n"), int):
                with self.lock:
                    self.requests.append(Request(timings["cache_n"], timings["cache_n"] + timings["prompt_n"]))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(model: Path, log: Path, threads: int, cache_reuse: int, slots: int) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    command = [sys.executable, str(ROOT / "tests" / "engine_server.py"), str(model), str(port),
               "--context", "8192", "--slots", str(slots), "--threads", str(threads), "--cache-reuse", str(cache_reuse)]
    with log.open("wb") as out:
        proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=out, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"the engine server exited: {log.read_text()[-2000:]}")
        try:
            if httpx.get(f"{base}/v1/models", timeout=2).status_code == 200:
                return proc, base
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    proc.terminate()
    raise SystemExit("the engine server did not start within 180 s")


def prompt_tokens(env: dict[str, str]) -> list[list[int]]:
    """Every reply prompt of the chat, rebuilt at its parent with the client's
    own assembly and tokenized with the model's template (the prompt-to-prompt figure)."""
    code = (
        "import asyncio, json, sys\n"
        "from omoide.chat.runtime import Runtime\n"
        "from omoide.llm.local import LocalBackend\n"
        "from omoide.domain.chat import Role\n"
        "async def main():\n"
        "    rt = await Runtime.start()\n"
        "    s = await rt.session(rt.character('suzune'))\n"
        "    tok = LocalBackend(s.settings)\n"
        "    path = await s.store.messages.path((await s.refresh()).head_id, limit=100000)\n"
        "    out = []\n"
        "    for m in path:\n"
        "        if m.role is Role.USER:\n"
        "            p = await s.build_prompt(m.id)\n"
        "            out.append(tok.tokenize(tok.render_prompt(p.messages)))\n"
        "    await s.aclose(); await rt.aclose()\n"
        "    json.dump(out, sys.stdout)\n"
        "asyncio.run(main())\n"
    )
    # The server lays prompts out with the model's chat template; so must the count.
    env = {**env, "OMOIDE_EMBEDDED_PROMPT": "chat"}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return list(json.loads(done.stdout))


def drive(base: str, recorder: Recorder, threshold: int, turns: int, max_tokens: int, src: Path,
          passages: int | None = None) -> Run:
    home = Path(tempfile.mkdtemp(prefix="omoide-server-cache-"))
    env = {
        **os.environ, "OMOIDE_HOME": str(home), "OMOIDE_BASE_URL": base, "OMOIDE_MODEL": "smollm2",
        "OMOIDE_SUMMARY_THRESHOLD": str(threshold), "OMOIDE_MAX_TOKENS": str(max_tokens),
        "OMOIDE_TEMPERATURE": "0.7", "OMOIDE_DISCOVER_SERVERS": "[]",
        # The figure is the server's cache share, not a time: a busy machine must not end the run as a stall.
        "OMOIDE_STALL_TIMEOUT": "900", "OMOIDE_REQUEST_TIMEOUT": "900", "PYTHONPATH": str(src), "PYTHONDONTWRITEBYTECODE": "1",
    }
    if passages is not None:
        env["OMOIDE_RECALL_PASSAGES"] = str(passages)
    run = Run()
    for turn in range(turns):
        recorder.take()
        done = subprocess.run(
            [sys.executable, "-c", "from omoide.cli.app import main; main()", "say", "suzune", LINES[turn % len(LINES)]],
            env=env, capture_output=True, text=True, timeout=900,
        )
        if done.returncode != 0:
            raise SystemExit(f"omoide say failed on turn {turn + 1}: {done.stderr[-2000:]}")
        run.failed_memory += done.stderr.count("memory failed")
        requests = recorder.take()
        if not requests:
            raise SystemExit(f"the server sent no timings for turn {turn + 1}")
        if turn > 0:  # the first turn has nothing to reuse (and probes the server's tool support)
            run.replies.append(requests[0])
            run.memory += requests[1:]
        print(f"    turn {turn + 1:>3}: reply reused {requests[0].share:6.1%} of {requests[0].total:>5} tokens"
              + (f"; {len(requests) - 1} memory request(s)" if len(requests) > 1 else ""), flush=True)
    prompts = prompt_tokens(env)
    run.prompt_to_prompt = [common_prefix(a, b) / len(b) for a, b in zip(prompts, prompts[1:])]
    return run


def figures(requests: list[Request]) -> str:
    shares = [r.share for r in requests]
    if not shares:
        return "none"
    weighted = sum(r.hit for r in requests) / max(sum(r.total for r in requests), 1)
    return f"mean {statistics.mean(shares):6.1%}  median {statistics.median(shares):6.1%}  token-weighted {weighted:6.1%}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=41, help="messages sent per run (the first has nothing to reuse)")
    parser.add_argument("--threshold", type=int, nargs="+", default=[20, 40], help="summary_threshold per run (recent_messages stays 15)")
    parser.add_argument("--max-tokens", type=int, default=400, help="max_tokens of each reply")
    parser.add_argument("--threads", type=int, default=1,
                        help="the server's threads (1: on a shared 2-core machine, 2 threads spin against other work)")
    parser.add_argument("--src", type=Path, default=ROOT / "src", help="the omoide source tree to drive (to compare another version)")
    parser.add_argument("--recall-passages", type=int, nargs="+", default=[None],
                        help="[memory] recall_passages per run (default: the setting's own, 20; 0 turns passages off)")
    parser.add_argument("--cache-reuse", type=int, default=None,
                        help="the server's --cache-reuse (default: the embedded engine's own, CACHE_REUSE; 0: a stock llama.cpp server)")
    parser.add_argument("--slots", type=int, default=None,
                        help="the server's cache slots, 8192 tokens each (default: the embedded engine's own, "
                             "[embedded] engine_slots; memory work has a slot of its own when there are two or more)")
    args = parser.parse_args()
    from omoide.config.sections import EmbeddedSettings
    from omoide.llm.engine import CACHE_REUSE
    from omoide.llm.model_file import smollm2_path

    cache_reuse = CACHE_REUSE if args.cache_reuse is None else args.cache_reuse
    slots = EmbeddedSettings().engine_slots if args.slots is None else args.slots

    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "server.log"
        proc, upstream = start_server(smollm2_path(), log, args.threads, cache_reuse, slots)
        recorder = Recorder(upstream)
        threading.Thread(target=recorder.serve, daemon=True).start()
        base = f"http://127.0.0.1:{recorder.port}/v1"
        try:
            for threshold in args.threshold:
                for passages in args.recall_passages:
                    print(f"  threshold {threshold} (recent 15), recall_passages {'default' if passages is None else passages}, "
                          f"{args.turns} turns through `omoide say`:", flush=True)
                    report(threshold, drive(base, recorder, threshold, args.turns, args.max_tokens, args.src, passages),
                           passages, cache_reuse, slots)
        finally:
            if proc.stdin is not None:
                proc.stdin.close()
            proc.wait(timeout=30)


def report(threshold: int, run: Run, passages: int | None = None, cache_reuse: int = 0, slots: int = 1) -> None:
    print(f"prefix-cache reuse from llama.cpp's own timings (SmolLM2-135M, n_ctx 8192 a slot, {slots} slot(s), "
          f"--cache-reuse {cache_reuse}; load {os.getloadavg()[0]:.1f}):")
    print(f"  recent 15, threshold {threshold}, recall_passages {'default' if passages is None else passages}:")
    print(f"    replies, server timings: {figures(run.replies)}  ({len(run.replies)} turns)")
    print(f"    prompt to prompt:        mean {statistics.mean(run.prompt_to_prompt):6.1%}  median {statistics.median(run.prompt_to_prompt):6.1%}")
    print(f"    memory requests:         {figures(run.memory)}  ({len(run.memory)} requests, {run.failed_memory} turn(s) reported a failure)")
    print(f"    replies reusing < 10%:   {sum(1 for r in run.replies if r.share < 0.10)} of {len(run.replies)}", flush=True)


if __name__ == "__main__":
    main()
