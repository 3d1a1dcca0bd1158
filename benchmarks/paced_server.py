"""An OpenAI-compatible server that streams every reply at a fixed token rate.

    python benchmarks/paced_server.py [--rate 200] [--tokens 3000] [--port 0] [--paragraph 60]

`POST /v1/chat/completions` answers with a `stream: true` SSE reply of
`--tokens` tokens (one short word each, plain text, a paragraph break every
`--paragraph` tokens), written on a clock so the
rate holds at `--rate` tokens per second however the writes are scheduled;
`GET /v1/models` lists one model; any other request is a 404 (no tokenizer
endpoints, so the client estimates its token counts). `typing_latency.py` runs it in-process.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from dataclasses import dataclass, field

WORDS = "rain tea lamp cup dusk quiet warm tide moss pine road bell kite fern".split()
MODEL = "paced"


def _chunk(text: str, finish: str | None = None) -> bytes:
    delta = {"content": text} if text else {}
    event = {"id": "x", "object": "chat.completion.chunk", "model": MODEL,
             "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    return f"data: {json.dumps(event)}\n\n".encode()


def _token(i: int, paragraph: int) -> str:
    """Token `i`: a word, with a blank line every `paragraph` tokens (0: one paragraph)."""
    end = "\n\n" if paragraph and (i + 1) % paragraph == 0 else " "
    return WORDS[i % len(WORDS)] + end


@dataclass
class PacedServer:
    rate: float = 200.0
    tokens: int = 3000
    port: int = 0
    paragraph: int = 60
    """Tokens per paragraph (a blank line after each); 0 streams one endless paragraph."""
    sent: list[tuple[int, float]] = field(default_factory=list)
    """(tokens, seconds) of every reply streamed to its end."""
    _server: asyncio.AbstractServer | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", self.port)
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while line := await reader.readline():
                method, path, _ = line.decode().split(" ", 2)
                length = 0
                while (header := await reader.readline()) not in (b"\r\n", b"\n", b""):
                    name, _, value = header.decode().partition(":")
                    if name.strip().lower() == "content-length":
                        length = int(value)
                await reader.readexactly(length)
                if method == "GET":
                    body = json.dumps({"object": "list", "data": [{"id": MODEL, "object": "model"}]}).encode()
                    writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                                 + f"content-length: {len(body)}\r\n\r\n".encode() + body)
                    await writer.drain()
                    continue
                if path.rstrip("/").endswith("/chat/completions"):
                    await self._stream(writer)
                    continue
                # Token counting (/tokenize, /apply-template …) is not offered: the client estimates.
                writer.write(b"HTTP/1.1 404 Not Found\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}")
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            return
        finally:
            writer.close()

    async def _stream(self, writer: asyncio.StreamWriter) -> None:
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n")
        start = time.perf_counter()
        sent = 0
        while sent < self.tokens:
            due = int((time.perf_counter() - start) * self.rate) + 1
            batch = b"".join(_chunk(_token(sent + i, self.paragraph)) for i in range(min(due, self.tokens) - sent))
            sent = max(sent, min(due, self.tokens))
            if batch:
                writer.write(f"{len(batch):x}\r\n".encode() + batch + b"\r\n")
                await writer.drain()
            await asyncio.sleep(max(0.0, start + sent / self.rate - time.perf_counter()))
        tail = _chunk("", "stop") + b"data: [DONE]\n\n"
        writer.write(f"{len(tail):x}\r\n".encode() + tail + b"\r\n0\r\n\r\n")
        await writer.drain()
        self.sent.append((sent, time.perf_counter() - start))


async def _serve(args: argparse.Namespace) -> None:
    server = PacedServer(args.rate, args.tokens, args.port, args.paragraph)
    await server.start()
    print(f"streaming {args.tokens} tokens at {args.rate:g}/s on {server.base_url}", flush=True)
    await asyncio.Event().wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=float, default=200.0)
    parser.add_argument("--tokens", type=int, default=3000)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--paragraph", type=int, default=60, help="tokens per paragraph (0: one paragraph)")
    asyncio.run(_serve(parser.parse_args()))


if __name__ == "__main__":
    main()
