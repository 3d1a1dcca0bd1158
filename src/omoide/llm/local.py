"""The embedded default: llama-cpp-python in-process, on the CPU.

Generation runs in a worker thread and hands chunks to the event loop through
a queue, so the UI never freezes; a cancelled reply sets a flag the thread
checks between tokens, and llama.cpp's abort callback checks it while a long
prompt is being evaluated. One model instance per file is shared by the
process, and a lock keeps it to one generation at a time (llama.cpp contexts
are not thread-safe). Whatever reaches past llama-cpp-python's high-level API
goes through llama_adapter.

The prompt is rendered here (the model's chat template, or Gemma's turn format
for a GGUF without one) and completed as text, with the sampling, stop strings
and loop guard of `tiny.py`, so that a 135M model ends its turn instead of
writing the user's.
"""

from __future__ import annotations

import asyncio
import atexit
import logging
import os
import threading
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from omoide.config.settings import Settings
from omoide.errors import BackendError, BadRequest, LocalModelMissing, ServerFailed
from omoide.llm import llama_adapter, tiny
from omoide.llm.base import ChatMessage, Done, Event, TextDelta, TokenCount, ToolSpec, Usage, is_memory_task
from omoide.llm.llama_log import route_llama_logs
from omoide.llm.model_file import INSTALL_HINT
from omoide.llm.play_script import script_prompt
from omoide.models.catalog import local_model_file

@dataclass(frozen=True, slots=True)
class _Finished:
    reason: str
    """'stop' (the model ended its turn, or the guard ended it) or 'length'."""
    tokens: int


if TYPE_CHECKING:
    from llama_cpp import Llama
    from llama_cpp.llama_types import ChatCompletionRequestMessage, CreateCompletionStreamResponse

    _Item = Usage | str | _Finished | Exception | None
    """What the worker thread hands over: text to show, then how it finished; None marks the end."""

_THREAD_NAME = "omoide-local-llm"
ATTEMPTS = 2
LAST_N = 512
"""Tokens the repetition penalty looks back over (llama.cpp's default is 64):
enough to reach the character's last reply or two, whose openings a tiny model
otherwise copies turn after turn."""
"""Completions tried when the loop guard leaves nothing of a reply (the next has another seed)."""
log = logging.getLogger(__name__)


class _Interrupt:
    """Stops llama.cpp mid-prompt when a reply is cancelled: evaluating a long
    prompt takes seconds, and no chunk arrives in between to check a flag.
    Armed only until the first token, as the callback runs hundreds of times
    per token."""

    def __init__(self, llama: Llama) -> None:
        self._context = llama_adapter.context_pointer(llama)
        self._stop: threading.Event | None = None
        self._callback = llama_adapter.AbortCallback(self._should_stop)

    def _should_stop(self) -> bool:
        stop = self._stop
        return stop is not None and stop.is_set()

    def arm(self, stop: threading.Event) -> None:
        self._stop = stop
        llama_adapter.set_abort_callback(self._context, self._callback)

    def disarm(self) -> None:
        self._stop = None
        llama_adapter.set_abort_callback(self._context, None)


@dataclass(frozen=True, slots=True)
class _Model:
    """One loaded model file, shared by every backend of the process."""

    llama: Llama
    lock: threading.Lock
    """Held for a whole generation, closing its chunk iterator included."""
    interrupt: _Interrupt


_models: dict[tuple[str, int], _Model] = {}
_models_lock = threading.Lock()


@atexit.register
def _free_models() -> None:
    # Freed explicitly: left to interpreter shutdown, llama.cpp's finalizers run
    # after their C library is gone and print errors.
    with _models_lock:
        for model in _models.values():
            model.llama.close()
        _models.clear()


def _load(path: Path, n_ctx: int, threads: int | None) -> _Model:
    try:
        import llama_cpp
    except ImportError as exc:
        raise LocalModelMissing("llama-cpp-python is not installed, so the embedded model cannot run.", INSTALL_HINT) from exc
    route_llama_logs()
    key = (str(path), n_ctx)
    with _models_lock:
        if key not in _models:
            if not path.is_file():
                raise LocalModelMissing(f"The model file {path} does not exist.", "Fix model_path in the config, or remove it to use the shipped model.")
            llama = llama_cpp.Llama(model_path=str(path), n_ctx=n_ctx, n_threads=threads or os.cpu_count() or 2, verbose=False, last_n_tokens_size=LAST_N)
            try:
                interrupt = _Interrupt(llama)
            except BaseException:
                llama.close()
                raise
            _models[key] = _Model(llama, threading.Lock(), interrupt)
        return _models[key]


class _Generation:
    """One completion: `run` is the worker thread's body, handing chunks to the
    consumer's event loop; iterating yields them there (raising the thread's
    errors), and `cancel` stops the thread however the consumer stops."""

    def __init__(self, backend: LocalBackend, model: _Model, messages: list[ChatMessage], max_tokens: int) -> None:
        self._backend = backend
        self._model = model
        self._messages = messages
        self._max_tokens = max_tokens
        self._loop = asyncio.get_running_loop()
        self._queue: asyncio.Queue[_Item] = asyncio.Queue()
        self._stop = threading.Event()
        speakers = messages[0].get("speakers") if messages else None
        task = bool(messages) and is_memory_task(messages[-1])
        if task:  # memory work continuing the chat: guarded as memory work, which may quote the chat
            speakers, messages = None, [m for m in messages if m["role"] == "system"][:1]
        self._user, self._character = (speakers[0], speakers[1]) if speakers and len(speakers) >= 2 else (backend.settings.user.name, "")
        self._others: list[str] = list(speakers[2:]) if speakers else []
        """The other characters of a group scene: a line opened by one of them ends the reply."""
        self._source = "\n".join(m.get("content") or "" for m in messages if m["role"] == "system")
        """The prompt's own text, which a reply must not recite. (Not the character's earlier
        lines: a tiny model's replies share their openings, and cutting those left replies empty.)"""

    def start(self) -> None:
        threading.Thread(target=self.run, name=_THREAD_NAME, daemon=True).start()

    def cancel(self) -> None:
        self._stop.set()

    def _put(self, item: _Item) -> None:
        try:
            self._loop.call_soon_threadsafe(self._queue.put_nowait, item)
        except RuntimeError:  # the consumer's loop has closed: nobody is listening
            self._stop.set()

    def run(self) -> None:
        backend, llama, interrupt = self._backend, self._model.llama, self._model.interrupt
        with self._model.lock:
            try:
                if self._stop.is_set():  # cancelled while another reply held the model
                    return
                prompt = backend.tokenize(backend.render_prompt(self._messages))
                prompt_tokens = len(prompt)
                if prompt_tokens >= backend.n_ctx:
                    self._put(BadRequest(
                        f"The prompt takes {prompt_tokens} tokens, more than the embedded model's context of {backend.n_ctx}.",
                        "Lower recent_messages or diary_prompt_lines, or raise context_size.",
                    ))
                    return
                self._put(Usage(prompt_tokens=prompt_tokens))
                params = tiny.sampling(backend.settings, self._user, script=backend.scripted(self._messages), others=self._others).kwargs()
                for attempt in range(1, ATTEMPTS + 1):
                    interrupt.arm(self._stop)
                    chunks = llama.create_completion(
                        prompt=prompt, stream=True, max_tokens=min(self._max_tokens, backend.n_ctx - prompt_tokens), **params,
                    )
                    if not isinstance(chunks, Iterator):
                        raise TypeError(f"llama-cpp-python streamed a {type(chunks).__name__}, not an iterator")
                    try:
                        if self._relay(chunks, last=attempt == ATTEMPTS):
                            break
                    finally:
                        chunks.close()  # type: ignore[attr-defined]  # inside the lock: closing still touches the context
                    if params["seed"] is not None:
                        params["seed"] += 1
            except Exception as exc:
                if self._stop.is_set():
                    # Aborted mid-prompt: start the next prompt from a clean cache.
                    llama.reset()  # type: ignore[no-untyped-call]  # unannotated in llama-cpp-python
                else:
                    self._put(exc)  # handed to the consumer, which raises it there
            finally:
                interrupt.disarm()
                self._put(None)

    def _relay(self, chunks: Iterator[CreateCompletionStreamResponse], *, last: bool) -> bool:
        """Hand the guarded text over; False (and nothing handed over) when the
        guard cut the reply to nothing and another attempt may follow."""
        guard = tiny.ReplyGuard(self._user, self._character, self._source, self._others)
        finish, tokens = "stop", 0
        for chunk in chunks:
            self._model.interrupt.disarm()
            if self._stop.is_set():
                return True
            choice = chunk["choices"][0]
            text = choice["text"] or ""
            tokens += 1 if text else 0  # the closing chunk carries only the finish reason
            shown = guard.feed(text)
            if shown:
                self._put(shown)
            if guard.stopped:
                log.info("embedded model: reply ended by the guard (%s)", guard.reason)
                break
            finish = choice["finish_reason"] or finish
        rest = guard.finish()
        if guard.stopped and not guard.shown and not last:
            log.info("embedded model: nothing left after the guard; trying again")
            return False
        if rest:
            self._put(rest)
        self._put(_Finished("stop" if guard.stopped else finish, tokens))
        return True

    def __aiter__(self) -> _Generation:
        return self

    async def __anext__(self) -> Usage | str | _Finished:
        item = await self._queue.get()
        if item is None:
            raise StopAsyncIteration
        if isinstance(item, BackendError):
            raise item
        if isinstance(item, Exception):
            raise ServerFailed(f"The embedded model failed: {item}.", "Try a shorter message, or `omoide doctor`.") from item
        return item


class LocalBackend:
    name = "local"
    supports_tools = False

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.path, trained_context = local_model_file(settings.embedded.model, settings.embedded.model_path)
        self.model = self.path.stem
        self.n_ctx = min(settings.backend.context_size, trained_context) if trained_context else settings.backend.context_size
        self.embedded = trained_context is not None
        """One of the tiny models omoide ships (not a GGUF of the user's own)."""
        self._loaded: _Model | None = None

    def _model(self) -> _Model:
        if self._loaded is None:
            self._loaded = _load(self.path, self.n_ctx, self.settings.embedded.threads)
        return self._loaded

    def _ensure(self) -> Llama:
        return self._model().llama

    async def load(self) -> None:
        """Load the model off the event loop (it takes a moment the first time)."""
        await asyncio.to_thread(self._model)

    async def stream(
        self,
        messages: list[ChatMessage],
        *,
        tools: list[ToolSpec] | None = None,
        tool_choice: str | dict[str, Any] | None = None,
        max_tokens: int | None = None,
    ) -> AsyncIterator[Event]:
        await self.load()
        generation = _Generation(self, self._model(), messages, self.reply_limit(max_tokens))
        generation.start()
        finish: str | None = None
        prompt: int | None = None
        completion = 0
        try:
            async for item in generation:
                if isinstance(item, Usage):
                    prompt = item.prompt_tokens
                elif isinstance(item, _Finished):
                    finish, completion = item.reason, item.tokens
                elif item:
                    yield TextDelta(item)
        finally:
            generation.cancel()
        yield Usage(prompt_tokens=prompt, completion_tokens=completion)
        yield Done(finish or "stop")

    def reply_limit(self, asked: int | None) -> int:
        """Tokens for this completion: a chat reply on an embedded model is kept
        short (tiny.REPLY_TOKENS) unless max_tokens is set; memory work asks for its own."""
        limit = asked or self.settings.backend.max_tokens
        if self.embedded and limit == self.settings.backend.max_tokens and not self.settings.is_set("max_tokens"):
            return min(limit, tiny.REPLY_TOKENS)
        return limit

    def scripted(self, messages: list[ChatMessage]) -> bool:
        """Whether `messages` go to the model as a play script: a chat reply (its
        head names the speakers) on an embedded model."""
        speakers = messages[0].get("speakers") if messages else None
        if not self.embedded or len(speakers or ()) < 2:
            return False
        shape = self.settings.embedded.prompt
        if shape == "auto":
            shape = "chat" if self._ensure().metadata.get("general.architecture", "").startswith("gemma") else "script"
        return shape == "script"

    def render_prompt(self, messages: list[ChatMessage]) -> str:
        """The prompt text exactly as the model reads it: for a chat reply on an
        embedded model, a play script it continues (play_script, unless
        embedded_prompt = "chat"); otherwise its chat template (or Gemma's turn
        format, or ChatML, for a file without one). The embedded models'
        headings become labels (tiny.shape)."""
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        llama = self._ensure()
        plain = _plain(tiny.shape(messages) if self.embedded else messages)
        if self.scripted(messages):
            user, character, *others = messages[0]["speakers"]
            bos = _special_text(llama, llama.token_bos()) if llama.metadata.get("tokenizer.ggml.add_bos_token") == "true" else ""
            return bos + script_prompt(plain, user, character, others=others)
        template = llama.metadata.get("tokenizer.chat_template")
        if not template:
            if llama.metadata.get("general.architecture", "").startswith("gemma"):
                return tiny.gemma_prompt(plain)
            return "".join(f"<|im_start|>{m['role']}\n{m.get('content') or ''}<|im_end|>\n" for m in plain) + "<|im_start|>assistant\n"
        formatter = Jinja2ChatFormatter(
            template=template, eos_token=_special_text(llama, llama.token_eos()), bos_token=_special_text(llama, llama.token_bos()),
        )
        return formatter(messages=plain).prompt

    def tokenize(self, text: str) -> list[int]:
        """Token ids as llama-cpp-python's chat handler makes them: special tokens
        parsed, no BOS added (the template writes its own)."""
        return list(self._ensure().tokenize(text.encode("utf-8"), add_bos=False, special=True))

    def prompt_tokens(self, messages: list[ChatMessage]) -> int:
        return len(self.tokenize(self.render_prompt(messages)))

    async def count_tokens(self, messages: list[ChatMessage]) -> TokenCount:
        tokens = await asyncio.to_thread(self.prompt_tokens, messages)
        return TokenCount(tokens, exact=True, method="embedded tokenizer, chat template applied")

    async def check(self) -> str:
        await self.load()
        size = self.path.stat().st_size / 1_048_576
        return f"embedded model {self.model} ({size:.0f} MiB) loaded from {self.path}"

    async def aclose(self) -> None:
        pass


def _special_text(llama: Llama, token_id: int) -> str:
    """A bos/eos token's text, empty for a model without one (id -1), as
    llama-cpp-python's own chat handler has it."""
    return llama_adapter.token_text(llama, token_id) if token_id != -1 else ""


def _plain(messages: list[ChatMessage]) -> list[ChatCompletionRequestMessage]:
    """Role and text only: the embedded model takes no tool messages (it uses the inline form)."""
    plain = [{"role": m["role"], "content": m.get("content") or ""} for m in messages if m["role"] != "tool"]
    return cast("list[ChatCompletionRequestMessage]", plain)
