"""Memory work's model calls: each within a token and a time limit, continuing
the chat's prompt where it fits (memory/shared.py), through the reply gate on
a backend that shares the replies' cores."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from omoide.config.sections import MemorySettings
from omoide.domain.chat import Message
from omoide.llm.base import CHARS_PER_TOKEN_BOUND, Backend, ChatMessage, TextDelta
from omoide.memory.shared import ChatPrefix, cache_key_of, continued
from omoide.memory.summary import SUMMARY_MAX_TOKENS, InvalidSummary

MIN_CHUNK = 4
"""The fewest messages a summary request is cut down to so that it continues the chat's prompt."""

Runner = Callable[[Callable[[], Awaitable[str]]], Awaitable[str]]
"""Runs one model call (the session's `ReplyGate.run`: after any reply, made again if a reply cut it short)."""


class MemoryCalls:
    """What a memory worker calls the model with (its attributes are set by the worker)."""

    backend: Backend
    settings: MemorySettings
    context_size: int
    prefix: ChatPrefix | None
    run: Runner | None

    async def _chunk_that_continues(
        self, chunk: list[Message], build: Callable[[list[Message]], list[ChatMessage]],
    ) -> tuple[list[Message], list[ChatMessage]]:
        """The part of `chunk` to summarize and the messages to send for it: all
        of `chunk`, continuing the chat's prompt as far as the part's last message
        (never further: what was said after it must not reach its summary) when it fits; or, when it would
        not fit (sent alone, it would evict the chat's cache on a one-slot server,
        and a rejected summary is retried at every turn), the oldest part of
        `chunk` whose request fits. The rest stays uncovered, so the next turn's
        compression takes it. Failing that, all of `chunk`, sent alone."""
        part = chunk
        while self.prefix is not None:
            request = build(part)
            through = self.prefix.through(part[-1])  # nothing newer than the part may reach its summary
            if through is None:
                break
            sent = await continued(self.backend, through, request, max_tokens=SUMMARY_MAX_TOKENS,
                                   context_size=self.context_size)
            if sent is not request:
                return part, sent
            if len(part) <= MIN_CHUNK:
                break
            part = part[: max(MIN_CHUNK, len(part) * 3 // 4)]
        return chunk, build(chunk)

    async def _complete_at(self, messages: list[ChatMessage], max_tokens: int, anchor_id: int) -> str:
        """Memory anchored at `anchor_id` (a memo) continues the chat's prompt only as
        far as that message: what follows it (the reply) may be swiped while every
        path through the anchor keeps the memo."""
        prefix = self.prefix.upto(anchor_id) if self.prefix is not None else None
        messages = await continued(self.backend, prefix, messages, max_tokens=max_tokens, context_size=self.context_size)
        return await self._complete(messages, max_tokens, laid_out=True)

    async def _complete(self, messages: list[ChatMessage], max_tokens: int = SUMMARY_MAX_TOKENS, *,
                        laid_out: bool = False) -> str:
        """The model's whole answer, within a token and a time limit: a server that
        ignores max_tokens or never ends its stream is given up, not waited on.
        `messages` continue the chat's prompt where they fit, unless `laid_out`
        says that was already decided."""
        if not laid_out:
            messages = await continued(self.backend, self.prefix, messages, max_tokens=max_tokens,
                                       context_size=self.context_size)
        if self.run is not None and getattr(self.backend, "replies_first", False):
            return await self.run(lambda: self._answer(messages, max_tokens))
        return await self._answer(messages, max_tokens)

    async def _answer(self, messages: list[ChatMessage], max_tokens: int) -> str:
        parts: list[str] = []
        size = 0
        events = self.backend.stream(messages, max_tokens=max_tokens, cache_key=cache_key_of(self.prefix, messages))
        try:
            async with asyncio.timeout(self.settings.timeout):
                async for event in events:
                    if isinstance(event, TextDelta):
                        parts.append(event.text)
                        size += len(event.text)
                        if size > max_tokens * CHARS_PER_TOKEN_BOUND:
                            raise InvalidSummary(f"the model wrote past {max_tokens} tokens without finishing")
        except TimeoutError:
            raise InvalidSummary(f"the model took longer than {self.settings.timeout:.0f} s (memory_timeout)") from None
        finally:
            close = getattr(events, "aclose", None)  # close the HTTP stream we stopped reading
            if close is not None:
                await close()
        return "".join(parts)
