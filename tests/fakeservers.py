"""Small threaded HTTP servers on local ports: model servers to discover (Ollama's
/api/tags, OpenAI-style /v1/models as llama.cpp and KoboldCpp answer it, one that
accepts and never answers) and a file server for `omoide models pull` (ranges,
Hugging Face's X-Linked-Etag, a connection dropped mid-file). Threaded, so sync
tests (typer's runner, subprocesses) and async tests can both use them."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    routes: dict[str, Any]
    file: bytes
    file_headers: dict[str, str]
    drop_after: int | None
    ranges: bool
    requests: list[dict[str, str]]
    unsized: bool
    endless: bool
    range_from_zero: bool


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
        self.server.requests.append({"path": self.path, **{k.lower(): v for k, v in self.headers.items()}})
        if self.path in self.server.routes:
            body = json.dumps(self.server.routes[self.path]).encode()
            self._send(200, body, {"content-type": "application/json"})
        elif self.path.endswith((".gguf", ".bin")) or "/resolve/" in self.path:
            self._file()
        else:
            self._send(404, b'{"error": "not found"}', {"content-type": "application/json"})

    def do_POST(self) -> None:  # noqa: N802
        body = self.rfile.read(int(self.headers.get("content-length", "0")))
        self.server.requests.append({"path": self.path, "method": "POST", "body": body.decode()})
        reply = self.server.routes.get(f"POST {self.path}")
        if reply is None:
            self._send(404, b'{"error": "not found"}', {"content-type": "application/json"})
            return
        self._send(200, reply, {"content-type": "text/event-stream"})

    def _send(self, status: int, body: bytes, headers: dict[str, str]) -> None:
        self.send_response(status)
        for name, value in {**headers, "content-length": str(len(body))}.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def _file(self) -> None:
        data, start = self.server.file, 0
        wanted = self.headers.get("range", "")
        headers = dict(self.server.file_headers)
        if self.server.unsized:
            self._unsized(data, headers)
            return
        if wanted.startswith("bytes=") and self.server.range_from_zero:
            self.send_response(206)  # a broken resume: "partial", but the whole file from byte 0
            headers["content-range"] = f"bytes 0-{len(data) - 1}/{len(data)}"
        elif wanted.startswith("bytes=") and self.server.ranges:
            start = int(wanted[6:].split("-")[0])
            if start >= len(data):
                self._send(416, b"", {"content-range": f"bytes */{len(data)}"})
                return
            self.send_response(206)
            headers["content-range"] = f"bytes {start}-{len(data) - 1}/{len(data)}"
        else:
            self.send_response(200)
        body = data[start:]
        headers["content-length"] = str(len(body))
        headers.setdefault("content-type", "application/octet-stream")
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        drop = self.server.drop_after
        if drop is not None:
            self.server.drop_after = None  # only the first download is cut short
            self.wfile.write(body[:drop])
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        for i in range(0, len(body), 65536):
            self.wfile.write(body[i : i + 65536])


    def _unsized(self, data: bytes, headers: dict[str, str]) -> None:
        """No Content-Length: the body ends when the connection closes, or (endless) never."""
        self.close_connection = True
        self.send_response(200)
        headers.setdefault("content-type", "application/octet-stream")
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("connection", "close")
        self.end_headers()
        try:
            self.wfile.write(data)
            block = b"\0" * 65536
            for _ in range(16_384 if self.server.endless else 0):  # at most 1 GiB: a test server stops by itself
                self.wfile.write(block)
        except (BrokenPipeError, ConnectionResetError):
            pass


@contextmanager
def http_server(
    routes: dict[str, Any] | None = None,
    *,
    file: bytes = b"",
    file_headers: dict[str, str] | None = None,
    drop_after: int | None = None,
    ranges: bool = True,
    unsized: bool = False,
    endless: bool = False,
    range_from_zero: bool = False,
) -> Iterator[_Server]:
    server = _Server(("127.0.0.1", 0), _Handler)
    server.routes = routes or {}
    server.file, server.file_headers, server.drop_after, server.ranges = file, file_headers or {}, drop_after, ranges
    server.requests = []
    server.unsized, server.endless, server.range_from_zero = unsized, endless, range_from_zero
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def address(server: _Server) -> str:
    return f"http://127.0.0.1:{server.server_address[1]}"


def chat_reply(text: str) -> bytes:
    """A streamed chat completion saying `text`, as an OpenAI-compatible server sends it."""
    chunks = [{"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}]},
              {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}]
    return b"".join(f"data: {json.dumps(c)}\n\n".encode() for c in chunks) + b"data: [DONE]\n\n"


def ollama(*models: str, reply: str = "Hello from Ollama.") -> dict[str, Any]:
    return {"POST /v1/chat/completions": chat_reply(reply), "/api/tags": {"models": [{"name": m, "size": 1} for m in models]}, "/v1/models": {"object": "list", "data": [{"id": m, "owned_by": "library"} for m in models]}}


def openai_models(*models: str, owned_by: str = "llamacpp") -> dict[str, Any]:
    return {"/v1/models": {"object": "list", "data": [{"id": m, "object": "model", "owned_by": owned_by} for m in models]}}


@contextmanager
def silent_server() -> Iterator[str]:
    """Accepts connections and never answers: a hung server."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        sock.close()


def closed_port() -> str:
    """An address where nothing listens."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"
