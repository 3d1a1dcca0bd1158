"""The OpenAI-compatible backend against a fault-injecting server."""

from __future__ import annotations

import asyncio

import pytest
from pydantic import SecretStr

from omoide.config import Settings
from omoide.errors import (
    AuthenticationFailed,
    BackendUnreachable,
    ModelNotFound,
    RateLimited,
    ServerFailed,
    StreamBroken,
    StreamStalled,
)
from omoide.llm.base import Done, TextDelta, ToolCall
from omoide.llm.openai_compat import OpenAICompatBackend
from tests.faultserver import FaultServer, Reply, sse, stream_reply, text_chunk

KEY = "sk-test-secret-123"


def backend(server: FaultServer, **kw) -> OpenAICompatBackend:
    base = dict(base_url=server.base_url, model="m", api_key=SecretStr(KEY), max_retries=3, stall_timeout=1.0, request_timeout=5.0)
    base.update(kw)
    return OpenAICompatBackend(Settings(**base))


async def collect(b: OpenAICompatBackend, **kw) -> tuple[str, list]:
    events = [e async for e in b.stream([{"role": "user", "content": "hi"}], **kw)]
    return "".join(e.text for e in events if isinstance(e, TextDelta)), events


async def test_a_streamed_reply_arrives_with_the_key_sent(fault_server: FaultServer) -> None:
    fault_server.queue(stream_reply("Hel", "lo ", "there"))
    b = backend(fault_server)
    text, events = await collect(b)
    await b.aclose()
    assert text == "Hello there" and events[-1] == Done("stop")
    request = fault_server.requests[0]
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert request.json()["stream"] is True and request.json()["model"] == "m"


async def test_split_utf8_and_crlf_arrive_intact(fault_server: FaultServer) -> None:
    fault_server.queue(stream_reply("café ", "思い出 ", "🍵", split=1, crlf=True))
    b = backend(fault_server)
    text, _ = await collect(b)
    await b.aclose()
    assert text == "café 思い出 🍵"


async def test_429_is_retried_then_succeeds(fault_server: FaultServer) -> None:
    fault_server.queue(Reply(status=429, headers={"retry-after": "0"}, body=b'{"error": {"message": "slow down"}}'), stream_reply("ok"))
    b = backend(fault_server)
    text, _ = await collect(b)
    await b.aclose()
    assert text == "ok" and len(fault_server.requests) == 2


async def test_persistent_429_gives_up_with_a_clear_error(fault_server: FaultServer) -> None:
    fault_server.queue(*[Reply(status=429, body=b'{"error": {"message": "slow down"}}') for _ in range(3)])
    b = backend(fault_server, max_retries=2)
    with pytest.raises(RateLimited) as info:
        await collect(b)
    await b.aclose()
    assert len(fault_server.requests) == 3 and "slow down" in info.value.message and KEY not in str(info.value)


async def test_500_is_retried_before_the_first_byte(fault_server: FaultServer) -> None:
    fault_server.queue(Reply(status=500, body=b"boom"), Reply(status=503, body=b"busy"), stream_reply("recovered"))
    b = backend(fault_server)
    text, _ = await collect(b)
    await b.aclose()
    assert text == "recovered" and len(fault_server.requests) == 3


async def test_500_every_time_is_a_server_error(fault_server: FaultServer) -> None:
    fault_server.queue(*[Reply(status=500, body=b'{"error": "kaboom"}') for _ in range(2)])
    b = backend(fault_server, max_retries=1)
    with pytest.raises(ServerFailed, match="kaboom"):
        await collect(b)
    await b.aclose()


async def test_401_is_not_retried_and_never_shows_the_key(fault_server: FaultServer) -> None:
    fault_server.queue(Reply(status=401, body=b'{"error": {"message": "invalid api key"}}'))
    b = backend(fault_server)
    with pytest.raises(AuthenticationFailed) as info:
        await collect(b)
    await b.aclose()
    assert len(fault_server.requests) == 1
    assert "OMOIDE_API_KEY" in info.value.hint and KEY not in str(info.value)


async def test_unknown_model_is_named(fault_server: FaultServer) -> None:
    fault_server.queue(Reply(status=404, body=b'{"error": {"message": "model \'m\' not found"}}'))
    b = backend(fault_server)
    with pytest.raises(ModelNotFound) as info:
        await collect(b)
    await b.aclose()
    assert "'m'" in info.value.message and "omoide doctor" in info.value.hint


async def test_a_stall_mid_stream_is_reported_and_not_retried(fault_server: FaultServer) -> None:
    body = sse(text_chunk("partial "))
    fault_server.queue(Reply(chunks=[body, 3.0, sse(text_chunk("late"))]))
    b = backend(fault_server, stall_timeout=0.5)
    received: list[str] = []
    with pytest.raises(StreamStalled):
        async for event in b.stream([{"role": "user", "content": "hi"}]):
            if isinstance(event, TextDelta):
                received.append(event.text)
    await b.aclose()
    assert received == ["partial "] and len(fault_server.requests) == 1


async def test_a_dropped_connection_mid_stream_keeps_what_arrived(fault_server: FaultServer) -> None:
    fault_server.queue(Reply(chunks=[sse(text_chunk("half a "))], close_early=True))
    b = backend(fault_server)
    received: list[str] = []
    with pytest.raises(StreamBroken):
        async for event in b.stream([{"role": "user", "content": "hi"}]):
            if isinstance(event, TextDelta):
                received.append(event.text)
    await b.aclose()
    assert received == ["half a "] and len(fault_server.requests) == 1


async def test_nobody_listening_is_unreachable_with_advice() -> None:
    b = OpenAICompatBackend(Settings(base_url="http://127.0.0.1:9/v1", max_retries=3))
    with pytest.raises(BackendUnreachable) as info:
        await collect(b)
    await b.aclose()
    assert "127.0.0.1:9" in info.value.message and "base_url" in info.value.hint


async def test_tool_calls_in_fragments_arrive_whole(fault_server: FaultServer) -> None:
    def delta(**d):  # type: ignore[no-untyped-def]
        return {"choices": [{"index": 0, "delta": {"tool_calls": [d]}, "finish_reason": None}]}

    body = sse(
        text_chunk("Noted. "),
        delta(index=0, id="call_1", type="function", function={"name": "save_memory", "arguments": ""}),
        delta(index=0, function={"arguments": '{"content": "He '}),
        delta(index=0, function={"arguments": 'likes rain."}'}),
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
        "[DONE]",
    )
    fault_server.queue(Reply(chunks=[body[i : i + 7] for i in range(0, len(body), 7)]))
    b = backend(fault_server)
    _, events = await collect(b)
    await b.aclose()
    calls = [e for e in events if isinstance(e, ToolCall)]
    assert [(c.id, c.name, c.arguments) for c in calls] == [("call_1", "save_memory", {"content": "He likes rain."})]
    assert events[-1] == Done("tool_calls")


async def test_cancelling_closes_the_connection(fault_server: FaultServer) -> None:
    fault_server.queue(Reply(chunks=[sse(text_chunk("first ")), 10.0, sse(text_chunk("never"))]))
    b = backend(fault_server, stall_timeout=30)
    got_first = asyncio.Event()

    async def consume() -> None:
        async for event in b.stream([{"role": "user", "content": "hi"}]):
            if isinstance(event, TextDelta):
                got_first.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(got_first.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    pool = b.client._transport._pool  # type: ignore[attr-defined]
    assert pool.connections == []  # a half-read response cannot be reused: it was closed
    await b.aclose()
