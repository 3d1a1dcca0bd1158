"""A small HTTP server that misbehaves on purpose, for the errors a real
server will not produce on demand: 429 then success, 500, 401, a model that
does not exist, a stall mid-stream, a dropped connection, bytes split across
chunks. Each test queues the behaviours it wants; requests are recorded."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Reply:
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes | None = None
    """A plain (non-streamed) body."""
    chunks: list[bytes | float] = field(default_factory=list)
    """Streamed body: bytes are written and flushed one by one; a float sleeps."""
    close_early: bool = False
    """Drop the connection after the chunks instead of ending the stream."""


def sse(*events: dict[str, Any] | str, crlf: bool = False) -> bytes:
    end = "\r\n" if crlf else "\n"
    out = []
    for event in events:
        data = event if isinstance(event, str) else json.dumps(event, ensure_ascii=False)
        out.append(f"data: {data}{end}{end}")
    return "".join(out).encode("utf-8")


def text_chunk(text: str, finish: str | None = None) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": {"content": text} if text else {}, "finish_reason": finish}]}


def stream_reply(*texts: str, split: int | None = None, crlf: bool = False) -> Reply:
    body = sse(*(text_chunk(t) for t in texts), text_chunk("", "stop"), "[DONE]", crlf=crlf)
    if split:
        return Reply(chunks=[body[i : i + split] for i in range(0, len(body), split)])
    return Reply(chunks=[body])


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


class FaultServer:
    def __init__(self) -> None:
        self.replies: list[Reply | Callable[[Request], Reply]] = []
        self.requests: list[Request] = []
        self._server: asyncio.AbstractServer | None = None
        self.port = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def queue(self, *replies: Reply | Callable[[Request], Reply]) -> None:
        self.replies.extend(replies)

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                line = await reader.readline()
                if not line:
                    return
                method, path, _ = line.decode().split(" ", 2)
                headers: dict[str, str] = {}
                while (header := await reader.readline()) not in (b"\r\n", b"\n", b""):
                    name, _, value = header.decode().partition(":")
                    headers[name.strip().lower()] = value.strip()
                body = await reader.readexactly(int(headers.get("content-length", "0")))
                if method == "GET" and path == "/props":  # not llama.cpp's server: no slots to tell of
                    if not await self._send(writer, Reply(status=404, body=b'{"error": "not found"}')):
                        return
                    continue
                request = Request(method, path, headers, body)
                self.requests.append(request)
                reply = self.replies.pop(0) if self.replies else Reply(status=404, body=b'{"error": "nothing queued"}')
                if callable(reply):
                    reply = reply(request)
                if not await self._send(writer, reply):
                    return
        except (ConnectionError, asyncio.IncompleteReadError):
            return
        finally:
            writer.close()

    async def _send(self, writer: asyncio.StreamWriter, reply: Reply) -> bool:
        streamed = reply.body is None
        head = [f"HTTP/1.1 {reply.status} X"]
        headers = {"content-type": "text/event-stream" if streamed else "application/json", **reply.headers}
        if streamed:
            headers["transfer-encoding"] = "chunked"
        else:
            headers["content-length"] = str(len(reply.body or b""))
        head += [f"{k}: {v}" for k, v in headers.items()]
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode())
        await writer.drain()
        if not streamed:
            writer.write(reply.body or b"")
            await writer.drain()
            return True
        for chunk in reply.chunks:
            if isinstance(chunk, float):
                await asyncio.sleep(chunk)
                continue
            writer.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
            await writer.drain()
        if reply.close_early:
            writer.transport.abort()
            return False
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        return True
