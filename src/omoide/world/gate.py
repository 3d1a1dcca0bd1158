"""Replies first: background LLM work steps aside while a reply streams.

A reply marks itself with `replying()`. Background work runs each LLM call
through `run()`: it waits until no reply is streaming, and if a reply starts
while the call is in flight, the call is cancelled (an embedded model stops at
once and frees its lock) and started again after the reply. So the next reply
never waits for an end-of-conversation pass, only (at worst) for the one call
in flight to stop. Memory work on the embedded engine goes through `run()`
too; warming the chat's cache goes through `unless_replying()`, which a
reply stops for good.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any, TypeVar, cast

T = TypeVar("T")


class ReplyGate:
    def __init__(self) -> None:
        self._active = 0
        self._idle = asyncio.Event()
        self._idle.set()
        self._background: set[asyncio.Task[Any]] = set()
        self.preempted = 0
        """How many background calls were cut short for a reply (for tests and benchmarks)."""

    @property
    def replying(self) -> bool:
        return self._active > 0

    @asynccontextmanager
    async def reply(self) -> AsyncIterator[None]:
        self._active += 1
        self._idle.clear()
        for task in list(self._background):
            if not task.done():
                task.cancel()
        try:
            yield
        finally:
            self._active -= 1
            if self._active == 0:
                self._idle.set()

    async def idle(self) -> None:
        """Until no reply streams."""
        await self._idle.wait()

    async def run(self, call: Callable[[], Awaitable[T]]) -> T:
        while True:
            await self._idle.wait()
            finished, result = await self._attempt(call)
            if finished:
                return cast(T, result)
            # a reply started: try again once it is over

    async def unless_replying(self, call: Callable[[], Awaitable[T]]) -> T | None:
        """Run `call` now if no reply streams; a reply that starts stops it, and
        it is not made again (None)."""
        if self.replying:
            return None
        return (await self._attempt(call))[1]

    async def _attempt(self, call: Callable[[], Awaitable[T]]) -> tuple[bool, T | None]:
        """(True, its result), or (False, None) when a reply that started stopped it."""
        task: asyncio.Task[T] = asyncio.ensure_future(call())
        self._background.add(task)
        try:
            return True, await asyncio.shield(task)
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is not None and current.cancelling():
                task.cancel()
                raise
            if not task.cancelled():
                raise
            self.preempted += 1
            return False, None
        finally:
            self._background.discard(task)
