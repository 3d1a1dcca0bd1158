"""The OpenAI-compatible backend against a fault-injecting server."""

from __future__ import annotations

import asyncio
import json
import time

import pytest

from omoide.config.settings import Secret, Settings
from omoide.errors import (
    AuthenticationFailed,
    BackendUnreachable,
    BadRequest,
    ModelNotFound,
    RateLimited,
    ServerFailed,
    StreamBroken,
    StreamStalled,
)
from omoide.llm.base import Done, TextDelta, ToolCall, ToolSpec, Usage
from omoide.llm.openai_compat import OpenAICompatBackend
from tests.faultserver import FaultServer, Reply, sse, stream_reply, text_chunk

KEY = "sk-test-secret-123"


def backend(server: FaultServer, **kw) -> OpenAICompatBackend:
    base = dict(base_url=server.base_url, model="m", api_key=Secret(KEY), max_retries=3, stall_timeout=1.0, request_timeout=5.0)
    base.update(kw)
    return OpenAICompatBackend(Settings(**base).backend)


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
    fault_server.queue(Reply(status=401, body=f'{{"error": {{"message": "invalid api key {KEY}"}}}}'.encode()))
    b = backend(fault_server)
    with pytest.raises(AuthenticationFailed) as info:
        await collect(b)
    await b.aclose()
    assert len(fault_server.requests) == 1
    assert "OMOIDE_API_KEY" in info.value.hint and "invalid api key" in info.value.message
    assert KEY not in str(info.value), "a key the server echoes back is blanked out"


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
    b = OpenAICompatBackend(Settings(base_url="http://127.0.0.1:9/v1", max_retries=3).backend)
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


def reply_json(data: object, status: int = 200) -> Reply:
    return Reply(status=status, body=json.dumps(data).encode())


SAVE = ToolSpec("save_memory", "Save a diary line.", {"type": "object", "properties": {"content": {"type": "string"}}})


async def test_retry_after_is_waited_for(fault_server: FaultServer) -> None:
    fault_server.queue(Reply(status=429, headers={"retry-after": "1"}, body=b"{}"), stream_reply("ok"))
    b = backend(fault_server)
    started = time.monotonic()
    text, _ = await collect(b)
    await b.aclose()
    assert text == "ok" and time.monotonic() - started >= 1.0


async def test_a_long_retry_after_is_reported_not_waited_for(fault_server: FaultServer) -> None:
    fault_server.queue(Reply(status=429, headers={"retry-after": "600"}, body=b'{"error": {"message": "quota"}}'))
    b = backend(fault_server)
    started = time.monotonic()
    with pytest.raises(RateLimited) as info:
        await collect(b)
    await b.aclose()
    assert time.monotonic() - started < 2 and len(fault_server.requests) == 1
    assert "600 s" in info.value.hint


async def test_408_and_409_are_retried(fault_server: FaultServer) -> None:
    fault_server.queue(Reply(status=408, body=b""), Reply(status=409, body=b""), stream_reply("fine"))
    b = backend(fault_server)
    text, _ = await collect(b)
    await b.aclose()
    assert text == "fine" and len(fault_server.requests) == 3


async def test_a_drop_before_the_first_byte_is_retried(fault_server: FaultServer) -> None:
    fault_server.queue(Reply(chunks=[], close_early=True), stream_reply("second try"))
    b = backend(fault_server)
    text, _ = await collect(b)
    await b.aclose()
    assert text == "second try" and len(fault_server.requests) == 2


async def test_no_first_byte_within_request_timeout_is_stalled_and_not_retried(fault_server: FaultServer) -> None:
    fault_server.queue(Reply(chunks=[3.0, sse(text_chunk("late"))]))
    b = backend(fault_server, request_timeout=0.5, stall_timeout=10)
    started = time.monotonic()
    with pytest.raises(StreamStalled) as info:
        await collect(b)
    await b.aclose()
    assert time.monotonic() - started < 2 and len(fault_server.requests) == 1
    assert "request_timeout" in info.value.hint


async def test_an_error_inside_the_stream_keeps_what_arrived(fault_server: FaultServer) -> None:
    fault_server.queue(Reply(chunks=[sse(text_chunk("so far "), {"error": {"message": "out of memory"}})]))
    b = backend(fault_server)
    received: list[str] = []
    with pytest.raises(ServerFailed, match="out of memory"):
        async for event in b.stream([{"role": "user", "content": "hi"}]):
            if isinstance(event, TextDelta):
                received.append(event.text)
    await b.aclose()
    assert received == ["so far "] and len(fault_server.requests) == 1


async def test_usage_from_the_last_chunk(fault_server: FaultServer) -> None:
    usage = {"choices": [], "usage": {"prompt_tokens": 120, "completion_tokens": 7, "prompt_tokens_details": {"cached_tokens": 100}}}
    body = sse(text_chunk("hi"), text_chunk("", "stop"), usage, "[DONE]")
    fault_server.queue(Reply(chunks=[body]))
    b = backend(fault_server)
    _, events = await collect(b)
    await b.aclose()
    assert Usage(prompt_tokens=120, completion_tokens=7, cache_read_tokens=100) in events
    assert fault_server.requests[0].json()["stream_options"] == {"include_usage": True}


@pytest.mark.parametrize(("status", "message"), [
    (400, "registry.ollama.ai/library/gemma:2b does not support tools"),
    (500, "tools param requires --jinja flag"),
])
async def test_a_server_without_tools_is_asked_again_without_them(fault_server: FaultServer, status: int, message: str) -> None:
    fault_server.queue(reply_json({"error": {"message": message}}, status=status), stream_reply("plain"))
    b = backend(fault_server, tools="auto")
    text, _ = await collect(b, tools=[SAVE])
    assert text == "plain" and b.supports_tools is False
    assert "tools" in fault_server.requests[0].json() and "tools" not in fault_server.requests[1].json()
    fault_server.queue(stream_reply("again"))
    await collect(b, tools=[SAVE])
    await b.aclose()
    assert "tools" not in fault_server.requests[2].json(), "the fallback is remembered"


async def test_native_tools_refused_says_how_to_fix_it(fault_server: FaultServer) -> None:
    fault_server.queue(reply_json({"error": {"message": "tools are not supported"}}, status=400))
    b = backend(fault_server, tools="native")
    with pytest.raises(BadRequest) as info:
        await collect(b, tools=[SAVE])
    await b.aclose()
    assert "inline" in info.value.hint and len(fault_server.requests) == 1


async def test_a_bare_404_points_at_base_url(fault_server: FaultServer) -> None:
    fault_server.queue(Reply(status=404, body=b"Not Found"))
    b = backend(fault_server)
    with pytest.raises(ModelNotFound) as info:
        await collect(b)
    await b.aclose()
    assert "/v1" in info.value.hint and len(fault_server.requests) == 1


async def test_a_400_naming_a_missing_model_is_model_not_found(fault_server: FaultServer) -> None:
    fault_server.queue(reply_json({"error": {"message": "model 'm' not found, try pulling it first"}}, status=400))
    b = backend(fault_server)
    with pytest.raises(ModelNotFound):
        await collect(b)
    await b.aclose()


async def test_closing_the_stream_early_closes_the_connection(fault_server: FaultServer) -> None:
    fault_server.queue(Reply(chunks=[sse(text_chunk("first ")), 10.0, sse(text_chunk("never"))]))
    b = backend(fault_server, stall_timeout=30)
    stream = b.stream([{"role": "user", "content": "hi"}])
    assert await anext(stream) == TextDelta("first ")
    started = time.monotonic()
    await stream.aclose()  # type: ignore[attr-defined]
    assert time.monotonic() - started < 1
    assert b.client._transport._pool.connections == []  # type: ignore[attr-defined]
    await b.aclose()


async def test_check_names_the_models(fault_server: FaultServer) -> None:
    fault_server.queue(reply_json({"data": [{"id": "m"}, {"id": "other"}]}))
    b = backend(fault_server)
    description = await b.check()
    assert "m, other" in description
    assert fault_server.requests[0].path == "/v1/models"
    assert fault_server.requests[0].headers["authorization"] == f"Bearer {KEY}"
    fault_server.queue(reply_json({"data": [{"id": "other"}]}))
    with pytest.raises(ModelNotFound) as info:
        await b.check()
    assert "other" in info.value.hint
    fault_server.queue(reply_json({"error": {"message": "bad key"}}, status=401))
    with pytest.raises(AuthenticationFailed) as auth:
        await b.check()
    await b.aclose()
    assert KEY not in str(auth.value)


async def test_check_against_nothing_is_unreachable() -> None:
    b = OpenAICompatBackend(Settings(base_url="http://127.0.0.1:9/v1").backend)
    with pytest.raises(BackendUnreachable) as info:
        await b.check()
    await b.aclose()
    assert "omoide doctor" in info.value.hint


async def test_count_tokens_falls_back_to_an_estimate_and_stops_asking(fault_server: FaultServer) -> None:
    fault_server.queue(Reply(status=404, body=b"no"), Reply(status=404, body=b"no"), Reply(status=404, body=b"no"))
    b = backend(fault_server)
    messages = [{"role": "user", "content": "x" * 400}]
    first = await b.count_tokens(messages)  # type: ignore[arg-type]
    second = await b.count_tokens(messages)  # type: ignore[arg-type]
    await b.aclose()
    assert not first.exact and first == second and first.tokens >= 100
    assert [r.path for r in fault_server.requests] == ["/apply-template", "/tokenize", "/extras/tokenize"]


async def test_count_tokens_without_the_template_is_an_estimate_from_the_server_tokenizer(fault_server: FaultServer) -> None:
    fault_server.queue(
        Reply(status=404, body=b"no"), Reply(status=404, body=b"no"),
        reply_json({"tokens": list(range(30))}), reply_json({"tokens": list(range(31))}),
    )
    b = backend(fault_server)
    messages = [{"role": "user", "content": "hello"}]
    first = await b.count_tokens(messages)  # type: ignore[arg-type]
    second = await b.count_tokens(messages)  # type: ignore[arg-type]
    await b.aclose()
    assert not first.exact and "estimated" in first.method
    assert first.tokens == 30 + 2 + 3 and second.tokens == 31 + 2 + 3
    assert [r.path for r in fault_server.requests] == ["/apply-template", "/tokenize", "/extras/tokenize", "/extras/tokenize"]
    assert fault_server.requests[2].json()["input"].count("hello") == 1


async def test_count_tokens_is_exact_through_the_servers_own_template(fault_server: FaultServer) -> None:
    rendered = "<|im_start|>user\nhello<|im_end|>\n<|im_start|>assistant\n"
    fault_server.queue(reply_json({"prompt": rendered}), reply_json({"tokens": list(range(9))}))
    b = backend(fault_server)
    count = await b.count_tokens([{"role": "user", "content": "hello"}])  # type: ignore[typeddict-item]
    await b.aclose()
    assert count.exact and count.tokens == 9
    assert fault_server.requests[0].json() == {"messages": [{"role": "user", "content": "hello"}]}
    assert fault_server.requests[1].json() == {"content": rendered, "add_special": True}


async def test_the_key_never_reaches_the_log(fault_server: FaultServer, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level("DEBUG")
    fault_server.queue(Reply(status=500, body=b"{}"), Reply(status=401, body=f'{{"error": "{KEY} is wrong"}}'.encode()))
    b = backend(fault_server)
    with pytest.raises(AuthenticationFailed):
        await collect(b)
    await b.aclose()
    assert "Retry 1 of 3" in caplog.text and KEY not in caplog.text
