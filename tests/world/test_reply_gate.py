"""The reply gate (world/gate.py): what a reply does to background calls in flight."""

from __future__ import annotations

import asyncio

from omoide.world.gate import ReplyGate

BOUND = 30.0


async def test_a_reply_stops_a_warm_up_for_good_and_a_memory_call_until_it_is_over() -> None:
    gate = ReplyGate()
    started: list[str] = []
    on_the_model = {"warm": asyncio.Event(), "memory": asyncio.Event()}
    hold = asyncio.Event()

    async def call(name: str) -> str:
        started.append(name)
        on_the_model.get(name, asyncio.Event()).set()
        await hold.wait()
        return name

    warm = asyncio.ensure_future(gate.unless_replying(lambda: call("warm")))
    memory = asyncio.ensure_future(gate.run(lambda: call("memory")))
    async with asyncio.timeout(BOUND):
        await on_the_model["warm"].wait()
        await on_the_model["memory"].wait()
    async with gate.reply():
        async with asyncio.timeout(BOUND):
            assert await warm is None  # stopped, and not made again
        assert not memory.done() and started == ["warm", "memory"]
        assert await gate.unless_replying(lambda: call("late warm")) is None  # a reply streams: not even begun
    hold.set()
    async with asyncio.timeout(BOUND):
        assert await memory == "memory"  # made again once the reply was over
    assert started == ["warm", "memory", "memory"] and gate.preempted == 2
