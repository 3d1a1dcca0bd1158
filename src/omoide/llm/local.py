"""The embedded default: llama.cpp's own server in this process, on the CPU.

The prompt is rendered here (a play script, the model's chat template through
the engine, or Gemma's turn format for a GGUF without one), tokenized by the
engine, and completed as token ids with the sampling, stop strings and loop
guard of `tiny.py`, so that a 135M model ends its turn instead of writing the
user's. Generation runs in a worker thread (the engine's call blocks there,
with the GIL released) and hands chunks to the event loop through a queue, so
the UI never freezes; a cancelled reply stops at the next chunk, which during
a long prompt comes after every batch (engine.BATCH tokens).

Each conversation partner gets a cache slot of its own (`cache_key`, see
slots.py), so a group scene's speakers do not evict each other's prompts.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from omoide.config.settings import Settings
from omoide.errors import BackendError, BadRequest, LocalModelMissing, ServerFailed
from omoide.llm import tiny
from omoide.locations import why_not_a_file
from omoide.llm.base import ChatMessage, Done, Event, TextDelta, TokenCount, ToolSpec, Usage, is_memory_task
from omoide.llm.engine import Chunk, Engine, EngineShape, shared
from omoide.llm.gguf import ModelInfo, read_model_info
from omoide.llm.play_script import script_prompt
from omoide.llm.slots import SlotTable
from omoide.models.catalog import local_model_file

ATTEMPTS = 2
"""Completions tried when the loop guard leaves nothing of a reply (the next has another seed)."""
LAST_N = 512
"""Tokens the repetition penalty looks back over (llama.cpp's default is 64):
enough to reach the character's last reply or two, whose openings a tiny model
otherwise copies turn after turn."""
SPARE_CORES = 1
"""Cores left out of generation unless `threads` is set (docs/engine.md has the
measurement): llama.cpp's generating threads spin waiting for each other, and
one that shares its core with other work stalls them all (on 2 busy cores, 2
threads fell from 84 to 6-10 tokens a second; 1 held 30-48)."""
_THREAD_NAME = "omoide-local-llm"
log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class _Finished:
    reason: str
    """'stop' (the model ended its turn, or the guard ended it) or 'length'."""
    tokens: int
    cached: int | None = None
    """Prompt tokens the engine took from its cache (`timings.cache_n`)."""


_Item = Usage | str | _Finished | Exception | None
"""What the worker thread hands over: text to show, then how it finished; None marks the end."""


def engine_threads(settings: Settings) -> tuple[int, int]:
    """(generation, prompt) threads: the settings, or the measured defaults."""
    cores = os.cpu_count() or 2
    generation = settings.embedded.threads if settings.embedded.threads and settings.embedded.threads > 0 else max(1, cores - SPARE_CORES)
    batch = settings.embedded.batch_threads if settings.embedded.batch_threads and settings.embedded.batch_threads > 0 else cores
    return generation, batch


class _Relay:
    """One attempt's chunks, guarded: what may be shown goes to `put`; returns
    True (stop) when the guard ends the reply or the reply was cancelled."""

    def __init__(self, generation: _Generation) -> None:
        g = generation
        self.guard = tiny.ReplyGuard(g.user, g.character, g.source, g.others)
        self.generation = generation
        self.finish = "stop"
        self.tokens = 0
        self.cached: int | None = None

    def __call__(self, chunk: Chunk) -> bool:
        generation = self.generation
        if generation.stop.is_set():
            return True
        # The cached count comes first with the prompt's progress (a reply the guard
        # stops never sees the closing timings), and again in those timings.
        progress, timings = chunk.get("prompt_progress"), chunk.get("timings")
        if isinstance(progress, dict) and isinstance(progress.get("cache"), int) and self.cached is None:
            self.cached = progress["cache"]
        if isinstance(timings, dict) and isinstance(timings.get("cache_n"), int):
            self.cached = timings["cache_n"]
        choices = chunk.get("choices") or []
        if not choices:
            return False
        choice = choices[0]
        text = choice.get("text") or ""
        if text:
            self.tokens += 1
        shown = self.guard.feed(text)
        if shown:
            generation.put(shown)
        if self.guard.stopped:
            log.info("embedded model: reply ended by the guard (%s)", self.guard.reason)
            return True
        self.finish = choice.get("finish_reason") or self.finish
        return False


class _Generation:
    """One completion: `run` is the worker thread's body, handing chunks to the
    consumer's event loop; iterating yields them there (raising the thread's
    errors), and `cancel` stops the thread however the consumer stops."""

    def __init__(self, backend: LocalBackend, messages: list[ChatMessage], max_tokens: int, slot: int) -> None:
        self.backend = backend
        self.messages = messages
        self.max_tokens = max_tokens
        self.slot = slot
        self.loop = asyncio.get_running_loop()
        self.queue: asyncio.Queue[_Item] = asyncio.Queue()
        self.stop = threading.Event()
        speakers = messages[0].get("speakers") if messages else None
        task = bool(messages) and is_memory_task(messages[-1])
        if task:  # memory work continuing the chat: guarded as memory work, which may quote the chat
            speakers, messages = None, [m for m in messages if m["role"] == "system"][:1]
        self.user, self.character = (speakers[0], speakers[1]) if speakers and len(speakers) >= 2 else (backend.settings.user.name, "")
        self.others: list[str] = list(speakers[2:]) if speakers else []
        """The other characters of a group scene: a line opened by one of them ends the reply."""
        self.source = "\n".join(m.get("content") or "" for m in messages if m["role"] == "system")
        """The prompt's own text, which a reply must not recite. (Not the character's earlier
        lines: a tiny model's replies share their openings, and cutting those left replies empty.)"""

    def start(self) -> None:
        threading.Thread(target=self.run, name=_THREAD_NAME, daemon=True).start()

    def cancel(self) -> None:
        self.stop.set()

    def put(self, item: _Item) -> None:
        try:
            self.loop.call_soon_threadsafe(self.queue.put_nowait, item)
        except RuntimeError:  # the consumer's loop has closed: nobody is listening
            self.stop.set()

    def run(self) -> None:
        backend = self.backend
        try:
            if self.stop.is_set():
                return
            prompt = backend.tokenize(backend.render_prompt(self.messages))
            if len(prompt) >= backend.n_ctx:
                self.put(BadRequest(
                    f"The prompt takes {len(prompt)} tokens, more than the embedded model's context of {backend.n_ctx}.",
                    "Lower recent_messages or diary_prompt_lines, or raise context_size.",
                ))
                return
            self.put(Usage(prompt_tokens=len(prompt)))
            sampling = tiny.sampling(backend.settings, self.user, script=backend.scripted(self.messages), others=self.others)
            body: dict[str, Any] = {
                **sampling.kwargs(), "prompt": prompt, "max_tokens": min(self.max_tokens, backend.n_ctx - len(prompt)),
                "repeat_last_n": LAST_N, "id_slot": self.slot, "cache_prompt": True, "return_progress": True,
            }
            if body["seed"] is None:
                del body["seed"]
            for attempt in range(1, ATTEMPTS + 1):
                relay = _Relay(self)
                backend.engine().complete(body, relay)
                if self.stop.is_set() or self._finish(relay, last=attempt == ATTEMPTS):
                    break
                if "seed" in body:
                    body["seed"] += 1
        except Exception as exc:
            if not self.stop.is_set():
                self.put(exc)  # handed to the consumer, which raises it there
        finally:
            self.put(None)

    def _finish(self, relay: _Relay, *, last: bool) -> bool:
        """Hand the rest over; False (and nothing handed over) when the guard cut
        the reply to nothing and another attempt may follow."""
        guard = relay.guard
        rest = guard.finish()
        if guard.stopped and not guard.shown and not last:
            log.info("embedded model: nothing left after the guard; trying again")
            return False
        if rest:
            self.put(rest)
        self.put(_Finished("stop" if guard.stopped else relay.finish, relay.tokens, relay.cached))
        return True

    def __aiter__(self) -> _Generation:
        return self

    async def __anext__(self) -> Usage | str | _Finished:
        item = await self.queue.get()
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
    memory_alone = True
    """Memory work is sent as a request of its own (to its own cache slot), not
    as a continuation of the chat: measured cheaper on the engine's slots
    (benchmarks/memory_slot.py, docs/engine.md)."""
    replies_first = True
    """Background memory work steps aside while a reply streams (memory/worker.py),
    and the chat's cache is refilled after it (chat/turn.py, `warm`): the engine
    runs on the same cores as the reply. A remote server has cores of its own."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.path, trained_context = local_model_file(settings.embedded.model, settings.embedded.model_path)
        self.model = self.path.stem
        self.embedded = trained_context is not None
        """One of the tiny models omoide ships (not a GGUF of the user's own)."""
        self._trained = trained_context
        self._info: ModelInfo | None = None
        self.slots = SlotTable(settings.embedded.engine_slots)

    @property
    def summarizes(self) -> bool:
        """Whether its summaries can be trusted: the shipped tiny models' invent
        what nobody said, so memory_writer 'auto' keeps the story's own words instead."""
        return not self.embedded

    def info(self) -> ModelInfo:
        """The model file's header facts (architecture, chat template, context)."""
        if self._info is None:
            if (problem := why_not_a_file(self.path, "model file")) is not None:
                raise LocalModelMissing(f"The model file {self.path} {problem}.",
                                        "Fix model_path in the config, or remove it to use the shipped model.")
            self._info = read_model_info(self.path)
        return self._info

    @property
    def n_ctx(self) -> int:
        """Tokens per slot: the setting, within what the model was trained with."""
        trained = self._trained or self.info().context_length
        return min(self.settings.backend.context_size, trained) if trained else self.settings.backend.context_size

    def shape(self) -> EngineShape:
        threads, batch_threads = engine_threads(self.settings)
        return EngineShape(self.path, self.n_ctx, self.slots.slots, threads, batch_threads)

    def engine(self) -> Engine:
        return shared(self.shape())

    async def load(self) -> None:
        """Start the engine off the event loop (it takes a moment the first time)."""
        await asyncio.to_thread(self.engine)

    async def stream(
        self,
        messages: list[ChatMessage],
        *,
        tools: list[ToolSpec] | None = None,
        tool_choice: str | dict[str, Any] | None = None,
        max_tokens: int | None = None,
        cache_key: str | None = None,
    ) -> AsyncIterator[Event]:
        await self.load()
        generation = _Generation(self, messages, self.reply_limit(max_tokens), self.slots.slot(cache_key))
        generation.start()
        finish: str | None = None
        prompt: int | None = None
        completion = 0
        cached: int | None = None
        try:
            async for item in generation:
                if isinstance(item, Usage):
                    prompt = item.prompt_tokens
                elif isinstance(item, _Finished):
                    finish, completion, cached = item.reason, item.tokens, item.cached
                elif item:
                    yield TextDelta(item)
        finally:
            generation.cancel()
        yield Usage(prompt_tokens=prompt, completion_tokens=completion, cache_read_tokens=cached)
        yield Done(finish or "stop")

    def reply_limit(self, asked: int | None) -> int:
        """Tokens for this completion: a chat reply on an embedded model is kept
        short (tiny.REPLY_TOKENS) unless max_tokens is set; memory work asks for its own."""
        limit = asked or self.settings.backend.max_tokens
        if self.embedded and limit == self.settings.backend.max_tokens and not self.settings.is_set("max_tokens"):
            return min(limit, tiny.REPLY_TOKENS)
        return limit

    @property
    def scripts_replies(self) -> bool:
        """Whether chat replies go to the model as a play script (an embedded
        model, unless embedded_prompt or Gemma's architecture says chat): a
        prompt whose window only grows, where a note can sit between two lines."""
        if not self.embedded:
            return False
        shape = self.settings.embedded.prompt
        if shape == "auto":
            shape = "chat" if self.info().architecture.startswith("gemma") else "script"
        return shape == "script"

    @property
    def recaps_in_window(self) -> bool:
        """The summary's newer parts go in the window where they were written
        (memory/timeline.py) on the play script; a chat template such as
        Gemma's takes no system text between turns."""
        return self.scripts_replies

    def scripted(self, messages: list[ChatMessage]) -> bool:
        """Whether `messages` go to the model as a play script: a chat reply (its
        head names the speakers) on a model that `scripts_replies`."""
        speakers = messages[0].get("speakers") if messages else None
        return len(speakers or ()) >= 2 and self.scripts_replies

    def render_prompt(self, messages: list[ChatMessage]) -> str:
        """The prompt text exactly as the model reads it: for a chat reply on an
        embedded model, a play script it continues (play_script, unless
        embedded_prompt = "chat"); otherwise its chat template, applied by the
        engine (or Gemma's turn format, or ChatML, for a file without one). The
        embedded models' headings become labels (tiny.shape)."""
        info = self.info()
        plain = _plain(tiny.shape(messages) if self.embedded else messages)
        if self.scripted(messages):
            user, character, *others = messages[0]["speakers"]
            return self._bos() + script_prompt(plain, user, character, others=others)
        if not info.chat_template:
            if info.architecture.startswith("gemma"):
                return tiny.gemma_prompt(plain)
            return "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in plain) + "<|im_start|>assistant\n"
        prompt = self.engine().apply_template(plain)
        bos = self._bos()
        return prompt if prompt.startswith(bos) else bos + prompt

    def _bos(self) -> str:
        """The BOS token's text where the model's prompts begin with it (the
        engine is given token ids, so nothing adds it on the way)."""
        if not self.info().add_bos:
            return ""
        bos = self.engine().props().get("bos_token")
        return bos if isinstance(bos, str) else ""

    def tokenize(self, text: str) -> list[int]:
        return self.engine().tokenize(text)

    def prompt_tokens(self, messages: list[ChatMessage]) -> int:
        return len(self.tokenize(self.render_prompt(messages)))

    async def count_tokens(self, messages: list[ChatMessage]) -> TokenCount:
        tokens = await asyncio.to_thread(self.prompt_tokens, messages)
        return TokenCount(tokens, exact=True, method="embedded engine's tokenizer, chat template applied")

    async def check(self) -> str:
        await self.load()
        size = self.path.stat().st_size / 1_048_576
        return f"embedded model {self.model} ({size:.0f} MiB) loaded from {self.path}"

    async def aclose(self) -> None:
        pass


def _plain(messages: list[ChatMessage]) -> list[dict[str, str]]:
    """Role and text only: the embedded model takes no tool messages (it uses the inline form)."""
    return [{"role": m["role"], "content": m.get("content") or ""} for m in messages if m["role"] != "tool"]
