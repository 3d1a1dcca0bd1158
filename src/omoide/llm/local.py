"""The embedded default: llama-cpp-python in-process, on the CPU.

Generation runs in a worker thread and hands chunks to the event loop through
a queue, so the UI never freezes; a cancelled reply sets a flag the thread
checks between tokens, and llama.cpp's abort callback checks it while a long
prompt is being evaluated. One model instance per file is shared by the
process, and a lock keeps it to one generation at a time (llama.cpp contexts
are not thread-safe).
"""

from __future__ import annotations

import asyncio
import atexit
import os
import threading
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from omoide.config import Settings
from omoide.errors import BadRequest, LocalModelMissing, ServerFailed
from omoide.llm.base import ChatMessage, Done, Event, TextDelta, TokenCount, ToolSpec, Usage
from omoide.llm.model_file import INSTALL_HINT, smollm2_path

_models: dict[tuple[str, int], tuple[Any, threading.Lock]] = {}
_interrupts: dict[int, _Interrupt] = {}
_models_lock = threading.Lock()
_END = object()
SMOLLM2_CONTEXT = 8192
"""The context SmolLM2 was trained with; a larger window only wastes memory."""


@atexit.register
def _free_models() -> None:
    # Freed explicitly: left to interpreter shutdown, llama.cpp's finalizers run
    # after their C library is gone and print errors.
    with _models_lock:
        for llama, _lock in _models.values():
            close = getattr(llama, "close", None)
            if close is not None:
                close()
        _models.clear()
        _interrupts.clear()


class _Interrupt:
    """Stops llama.cpp mid-prompt when a reply is cancelled: evaluating a long
    prompt takes seconds, and no chunk arrives in between to check a flag.
    Armed only until the first token, as the callback runs hundreds of times
    per token."""

    def __init__(self, llama: Any) -> None:
        import llama_cpp

        self._set = llama_cpp.llama_set_abort_callback
        self._ctx = llama._ctx.ctx
        self._stop: threading.Event | None = None
        # Both kept referenced: llama.cpp holds only raw pointers to them.
        self._callback = llama_cpp.ggml_abort_callback(self._should_stop)
        self._none = llama_cpp.ggml_abort_callback(0)

    def _should_stop(self, _data: Any) -> bool:
        stop = self._stop
        return stop is not None and stop.is_set()

    def arm(self, stop: threading.Event) -> None:
        self._stop = stop
        self._set(self._ctx, self._callback, None)

    def disarm(self) -> None:
        self._stop = None
        self._set(self._ctx, self._none, None)


def _load(path: Path, n_ctx: int, threads: int | None) -> Any:
    try:
        import llama_cpp
    except ImportError as exc:
        raise LocalModelMissing("llama-cpp-python is not installed, so the embedded model cannot run.", INSTALL_HINT) from exc
    key = (str(path), n_ctx)
    with _models_lock:
        if key not in _models:
            if not path.is_file():
                raise LocalModelMissing(f"The model file {path} does not exist.", "Fix model_path in the config, or remove it to use the shipped model.")
            llama = llama_cpp.Llama(model_path=str(path), n_ctx=n_ctx, n_threads=threads or os.cpu_count() or 2, verbose=False)
            _models[key] = (llama, threading.Lock())
            _interrupts[id(llama)] = _Interrupt(llama)
        return _models[key]


class LocalBackend:
    name = "local"
    supports_tools = False

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.path = settings.model_path or smollm2_path()
        self.model = self.path.stem
        self.n_ctx = settings.context_size if settings.model_path else min(settings.context_size, SMOLLM2_CONTEXT)
        self._llama: Any = None
        self._generate_lock: threading.Lock | None = None

    def _ensure(self) -> Any:
        if self._llama is None:
            self._llama, self._generate_lock = _load(self.path, self.n_ctx, self.settings.threads)
        return self._llama

    async def load(self) -> None:
        """Load the model off the event loop (it takes a moment the first time)."""
        await asyncio.to_thread(self._ensure)

    async def stream(
        self,
        messages: list[ChatMessage],
        *,
        tools: list[ToolSpec] | None = None,
        tool_choice: str | dict[str, Any] | None = None,
        max_tokens: int | None = None,
    ) -> AsyncIterator[Event]:
        await self.load()
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[Any] = asyncio.Queue()
        stop = threading.Event()
        clean = _plain(messages)
        limit = max_tokens or self.settings.max_tokens

        def put(item: Any) -> None:
            try:
                loop.call_soon_threadsafe(queue.put_nowait, item)
            except RuntimeError:  # the consumer's loop has closed: nobody is listening
                stop.set()

        interrupt = _interrupts[id(self._llama)]

        def generate() -> None:
            assert self._generate_lock is not None
            with self._generate_lock:
                try:
                    if stop.is_set():  # cancelled while another reply held the model
                        return
                    prompt_tokens = len(self.tokenize(self.render_prompt(messages)))
                    if prompt_tokens >= self.n_ctx:
                        put(_TooLong(prompt_tokens))
                        return
                    put(Usage(prompt_tokens=prompt_tokens))
                    interrupt.arm(stop)
                    chunks = self._llama.create_chat_completion(
                        messages=clean, stream=True, max_tokens=min(limit, self.n_ctx - prompt_tokens),
                        temperature=self.settings.temperature, top_p=self.settings.top_p,
                    )
                    try:
                        for chunk in chunks:
                            interrupt.disarm()
                            if stop.is_set():
                                break
                            put(chunk)
                    finally:
                        chunks.close()  # inside the lock: closing still touches the context
                except Exception as exc:
                    if stop.is_set():
                        # Aborted mid-prompt: start the next prompt from a clean cache.
                        self._llama.reset()
                    else:
                        put(exc)  # handed to the consumer, which raises it there
                finally:
                    interrupt.disarm()
                    put(_END)

        thread = threading.Thread(target=generate, name="omoide-local-llm", daemon=True)
        thread.start()
        finish: str | None = None
        prompt: int | None = None
        completion = 0
        try:
            while True:
                item = await queue.get()
                if item is _END:
                    break
                if isinstance(item, Usage):
                    prompt = item.prompt_tokens
                    continue
                if isinstance(item, _TooLong):
                    raise BadRequest(
                        f"The prompt takes {item.tokens} tokens, more than the embedded model's context of {self.n_ctx}.",
                        "Lower recent_messages or diary_prompt_lines, or raise context_size.",
                    )
                if isinstance(item, Exception):
                    raise ServerFailed(f"The embedded model failed: {item}.", "Try a shorter message, or `omoide doctor`.") from item
                for choice in item.get("choices", []):
                    text = (choice.get("delta") or {}).get("content")
                    if text:
                        completion += 1
                        yield TextDelta(text)
                    if choice.get("finish_reason"):
                        finish = choice["finish_reason"]
        finally:
            stop.set()
        yield Usage(prompt_tokens=prompt, completion_tokens=completion)
        yield Done(finish or "stop")

    def render_prompt(self, messages: list[ChatMessage]) -> str:
        """The prompt text exactly as the model's chat template lays it out."""
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        llama = self._ensure()
        template = llama.metadata.get("tokenizer.chat_template")
        if not template:
            return "".join(f"<|im_start|>{m['role']}\n{m.get('content') or ''}<|im_end|>\n" for m in messages) + "<|im_start|>assistant\n"
        eos = llama._model.token_get_text(llama.token_eos()) if hasattr(llama, "_model") else ""
        bos = llama._model.token_get_text(llama.token_bos()) if hasattr(llama, "_model") else ""
        formatter = Jinja2ChatFormatter(template=template, eos_token=eos, bos_token=bos)
        return formatter(messages=_plain(messages)).prompt

    def tokenize(self, text: str) -> list[int]:
        """Token ids as llama-cpp-python's chat handler makes them: special tokens
        parsed, no BOS added (the template writes its own)."""
        return list(self._ensure().tokenize(text.encode("utf-8"), add_bos=False, special=True))

    async def count_tokens(self, messages: list[ChatMessage]) -> TokenCount:
        def count() -> int:
            return len(self.tokenize(self.render_prompt(messages)))

        tokens = await asyncio.to_thread(count)
        return TokenCount(tokens, exact=True, method="embedded tokenizer, chat template applied")

    async def check(self) -> str:
        await self.load()
        size = self.path.stat().st_size / 1_048_576
        return f"embedded model {self.model} ({size:.0f} MiB) loaded from {self.path}"

    async def aclose(self) -> None:
        pass


@dataclass(frozen=True, slots=True)
class _TooLong:
    tokens: int


def _plain(messages: list[ChatMessage]) -> list[dict[str, str]]:
    """Role and text only: the embedded model takes no tool messages (it uses the inline form)."""
    return [{"role": m["role"], "content": m.get("content") or ""} for m in messages if m["role"] != "tool"]
