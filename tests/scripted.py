"""A scripted backend: the one test double, for tests about what omoide does with
a model's output (UI, memory, branches) rather than about talking to a model.

Each call to `stream` plays the next turn of the script: a list of events (or
plain strings, sent as text deltas) or an exception to raise. An `asyncio.Event`
in the list makes the stream wait for it, so tests can hold a reply mid-stream.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

from omoide.llm.base import ChatMessage, Done, TextDelta, TokenCount, ToolSpec, estimate_tokens

Step = Any  # str | Event | BaseException | asyncio.Event


class ScriptedBackend:
    name = "scripted"

    def __init__(
        self,
        turns: list[list[Step] | BaseException] | None = None,
        *,
        delay: float = 0.0,
        supports_tools: bool = False,
        default: Callable[[list[ChatMessage]], list[Step]] | None = None,
        model: str = "script",
    ) -> None:
        self.turns = list(turns or [])
        self.delay = delay
        self.supports_tools = supports_tools
        self.default = default
        self.model = model
        self.calls: list[dict[str, Any]] = []
        self.closed = False

    def add(self, *turns: list[Step] | BaseException) -> None:
        self.turns.extend(turns)

    async def stream(
        self,
        messages: list[ChatMessage],
        *,
        tools: list[ToolSpec] | None = None,
        tool_choice: str | dict[str, Any] | None = None,
        max_tokens: int | None = None,
        cache_key: str | None = None,
    ) -> AsyncIterator[Any]:
        self.calls.append({"messages": [dict(m) for m in messages], "tools": tools, "max_tokens": max_tokens, "cache_key": cache_key})
        if self.turns:
            turn = self.turns.pop(0)
        elif self.default is not None:
            turn = self.default(messages)
        else:
            turn = ["…"]
        if isinstance(turn, BaseException):
            raise turn
        for step in turn:
            if isinstance(step, asyncio.Event):
                await step.wait()
                continue
            if isinstance(step, BaseException):
                raise step
            if self.delay:
                await asyncio.sleep(self.delay)
            yield TextDelta(step) if isinstance(step, str) else step
        yield Done("stop")

    async def count_tokens(self, messages: list[ChatMessage]) -> TokenCount:
        return estimate_tokens(messages)

    async def check(self) -> str:
        return "scripted backend"

    async def aclose(self) -> None:
        self.closed = True
