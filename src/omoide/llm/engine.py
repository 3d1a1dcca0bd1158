"""The embedded engine: llama.cpp's own server, inside this process (xllamacpp).

One engine per model file and shape, shared by every backend of the process
and freed at exit. It keeps one cache slot per conversation partner (see
slots.py): llama.cpp evaluates only what a prompt adds to the one its slot
last held, and reports how much it took from the cache (`timings.cache_n`)
and how much it evaluated (`timings.prompt_n`) with every reply.

llama.cpp's server always opens a listener. This one is omoide's alone: a unix
socket (no TCP port at all) in a directory only this user can enter, the socket
itself mode 0600, and every route but /health asks for a key made fresh for
this process (`secrets.token_urlsafe`) that is never written anywhere.
Completions go straight into the server in-process; the listener serves the
tokenizer, the chat template and the server's props.

Streaming is a callback per chunk that llama.cpp calls from the thread that
made the request (the GIL is released in between). Returning True stops the
reply; with `return_progress` a chunk also arrives after every batch of a long
prompt, so a stop takes effect within one batch (`BATCH` tokens). An
exception raised inside the callback would be swallowed by xllamacpp, so the
callback here never raises: it keeps the exception and stops.
"""

from __future__ import annotations

import atexit
import ctypes
import logging
import os
import secrets
import shutil
import signal
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from omoide.errors import LocalModelMissing
from omoide.locations import why_not_a_file
from omoide.llm.llama_log import route_engine_logs
from omoide.llm.model_file import INSTALL_HINT

VERSION = "2026.10.11549"
"""The xllamacpp release omoide is measured against (pinned in pyproject.toml)."""
BATCH = 128
"""Prompt tokens evaluated between two chances to stop (n_batch): a stopped
reply ends within one batch. Smaller batches cost prompt speed (docs/engine.md)."""
CACHE_REUSE = 32
"""llama.cpp's --cache-reuse: after the first token a new prompt does not share
with its slot, runs of at least this many tokens that the slot still holds are
shifted into place instead of evaluated again. A scene's prompt drops a line
in the middle every turn (the last turn's volatile notes, an old message of
the window), and the rest would otherwise be read again."""
RAM_CACHE_MIB = 0
"""llama.cpp's host-RAM prompt cache (8 GiB by default): off, as each speaker
keeps a slot of its own and memory work continues the chat's prompt."""
REQUEST_TIMEOUT = 120.0
CLOSE_WAIT = 30.0
"""Seconds closing waits for a completion still running to stop (it stops
within one batch once told): freeing the server under it, or letting the
interpreter end while it is in llama.cpp, aborts the process."""

log = logging.getLogger(__name__)
Chunk = dict[str, Any]


@dataclass(frozen=True, slots=True)
class EngineShape:
    path: Path
    context: int
    """Tokens per slot."""
    slots: int
    threads: int
    """Threads generating tokens."""
    batch_threads: int
    """Threads evaluating a prompt."""


class EngineFailed(RuntimeError):
    """The engine answered a request with an error."""


class Engine:
    def __init__(self, shape: EngineShape) -> None:
        try:
            import xllamacpp
        except ImportError as exc:
            raise LocalModelMissing("xllamacpp (llama.cpp's server, prebuilt) is not installed, so the embedded model cannot run.",
                                    INSTALL_HINT) from exc
        self.shape = shape
        self.key = secrets.token_urlsafe(32)
        self.folder = Path(tempfile.mkdtemp(prefix="omoide-engine-"))  # mode 0700: only this user enters it
        self.socket = self.folder / "engine.sock"
        params = xllamacpp.CommonParams()
        params.model.path = str(shape.path)
        params.n_ctx = shape.context * shape.slots  # llama.cpp splits it evenly between the slots
        params.n_parallel = shape.slots
        params.n_batch = BATCH
        params.n_ubatch = BATCH
        params.cpuparams.n_threads = shape.threads
        params.cpuparams_batch.n_threads = shape.batch_threads
        params.hostnames = [str(self.socket)]
        params.api_keys = [self.key]
        params.cache_ram_mib = RAM_CACHE_MIB
        params.n_cache_reuse = CACHE_REUSE
        params.cache_idle_slots = False  # it needs the RAM cache
        params.warmup = False
        params.endpoint_props = True
        params.endpoint_slots = True
        params.n_threads_http = 2
        params.use_color = False
        # Warnings and errors only, unless the log asks for more; nothing at all
        # where llama.cpp's stderr cannot be routed to the log (llama_log.py).
        routed = route_engine_logs()
        params.verbosity = (3 if logging.getLogger("llama_cpp").isEnabledFor(logging.DEBUG) else 2) if routed else -1
        handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
        actions = _signal_actions(handlers)
        try:
            self.server = xllamacpp.Server(params)
        except RuntimeError as exc:
            shutil.rmtree(self.folder, ignore_errors=True)
            raise LocalModelMissing(f"llama.cpp could not load {shape.path.name}: {exc}",
                                    "See the log (`omoide paths`) for llama.cpp's reason; the file may be damaged or too new.") from exc
        finally:
            _restore(handlers, actions)
        os.chmod(self.socket, 0o600)
        self.client = httpx.Client(transport=httpx.HTTPTransport(uds=str(self.socket)), base_url="http://omoide-engine",
                                   headers={"Authorization": f"Bearer {self.key}"}, timeout=REQUEST_TIMEOUT)
        self._props: dict[str, Any] | None = None
        self._running = 0
        self._closing = False
        self._idle = threading.Condition()

    @property
    def url(self) -> str:
        """The listener, for logs and tests: a path, not a port."""
        return f"unix://{self.socket}"

    def post(self, route: str, body: dict[str, Any]) -> dict[str, Any]:
        response = self.client.post(route, json=body)
        return self._json(route, response)

    def get(self, route: str) -> dict[str, Any]:
        return self._json(route, self.client.get(route))

    def _json(self, route: str, response: httpx.Response) -> dict[str, Any]:
        try:
            data = response.json()
        except ValueError:
            data = None
        if response.status_code != 200 or not isinstance(data, dict):
            raise EngineFailed(f"{route} answered {response.status_code}: {response.text[:300]}")
        return data

    def props(self) -> dict[str, Any]:
        if self._props is None:
            self._props = self.get("/props")
        return self._props

    def tokenize(self, text: str) -> list[int]:
        """Token ids as the engine evaluates them: special tokens parsed, no BOS added."""
        tokens = self.post("/tokenize", {"content": text, "add_special": False, "parse_special": True}).get("tokens")
        if not isinstance(tokens, list):
            raise EngineFailed("/tokenize answered without tokens")
        return [int(t) for t in tokens]

    def apply_template(self, messages: list[dict[str, str]]) -> str:
        """The prompt the model's own chat template makes of `messages` (llama.cpp's Jinja)."""
        prompt = self.post("/apply-template", {"messages": messages}).get("prompt")
        if not isinstance(prompt, str):
            raise EngineFailed("/apply-template answered without a prompt")
        return prompt

    def complete(self, body: dict[str, Any], on_chunk: Callable[[Chunk], bool]) -> None:
        """Stream a completion (blocking: call it from a worker thread). `on_chunk`
        returns True to stop; an exception it raises is re-raised here."""
        failure: list[BaseException] = []

        def relay(chunk: Chunk) -> bool:
            if self._closing:
                return True  # the process is ending: stop at once
            try:
                if isinstance(chunk, dict) and "error" in chunk:
                    raise EngineFailed(str(chunk["error"]))
                return on_chunk(chunk)
            except BaseException as exc:  # xllamacpp would swallow it and end the stream silently
                failure.append(exc)
                return True

        with self._idle:
            if self._closing:
                raise EngineFailed("the engine is closing")
            self._running += 1
        try:
            self.server.handle_completions({**body, "stream": True}, relay)
        finally:
            with self._idle:
                self._running -= 1
                self._idle.notify_all()
        if failure:
            raise failure[0]

    def close(self) -> None:
        """Stop what still runs (a reply the process no longer waits for), then
        free the model and remove the socket's folder."""
        with self._idle:
            self._closing = True
            stopped = self._idle.wait_for(lambda: self._running == 0, timeout=CLOSE_WAIT)
        self.client.close()
        if stopped:
            del self.server  # stops llama.cpp's loop and frees the model
        else:
            log.warning("a completion did not stop within %.0f s; leaving the engine to the process's end", CLOSE_WAIT)
        shutil.rmtree(self.folder, ignore_errors=True)


def _libc() -> Any:
    try:
        return ctypes.CDLL(None, use_errno=True) if os.name == "posix" else None
    except OSError:
        return None


_SIGACTION_BYTES = 512
"""Room for a `struct sigaction`, kept opaque (152 bytes on Linux x86-64)."""


def _signal_actions(handlers: dict[signal.Signals, Any]) -> dict[signal.Signals, Any]:
    """The process's actions for these signals as the C library holds them,
    to put back from any thread (signal.signal works only in the main one)."""
    libc = _libc()
    if libc is None or threading.current_thread() is threading.main_thread():
        return {}
    saved: dict[signal.Signals, Any] = {}
    for sig in handlers:
        action = ctypes.create_string_buffer(_SIGACTION_BYTES)
        if libc.sigaction(int(sig), None, action) == 0:
            saved[sig] = action
    return saved


def _restore(handlers: dict[signal.Signals, Any], actions: dict[signal.Signals, Any]) -> None:
    """Put Python's signal handlers back: llama.cpp's server installs its own
    for SIGINT and SIGTERM, which would stop the engine instead of omoide (and
    a SIGTERM would leave the socket's folder behind). From a worker thread,
    the actions saved before are put back as they were."""
    if threading.current_thread() is not threading.main_thread():
        libc = _libc()
        for sig, action in actions.items():
            libc.sigaction(int(sig), action, None)
        return
    for sig, handler in handlers.items():
        if handler is not None:
            signal.signal(sig, handler)


_engines: dict[EngineShape, Engine] = {}
_engines_lock = threading.Lock()
_ended: list[bool] = []
"""Set once the process closes its engines: none is started after that."""


def shared(shape: EngineShape) -> Engine:
    """The process's engine for `shape`, started on first use."""
    with _engines_lock:
        engine = _engines.get(shape)
        if engine is None:
            if _ended:
                raise EngineFailed("the process is ending")
            if (problem := why_not_a_file(shape.path, "model file")) is not None:
                raise LocalModelMissing(f"The model file {shape.path} {problem}.",
                                        "Fix model_path in the config, or remove it to use the shipped model.")
            engine = _engines[shape] = Engine(shape)
        return engine


@atexit.register
def close_all() -> None:
    with _engines_lock:
        _ended.append(True)
        for engine in _engines.values():
            engine.close()
        _engines.clear()
