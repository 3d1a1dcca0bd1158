"""The Anthropic backend on recorded event streams, replayed by a local server."""

from __future__ import annotations

from pathlib import Path

import pytest

from omoide.characters.model import Character
from omoide.config.settings import Secret, Settings
from omoide.domain.chat import MemoryState, Summary
from omoide.errors import AuthenticationFailed, ModelNotFound, ServerFailed, StreamStalled
from omoide.llm.anthropic import AnthropicBackend, to_anthropic
from omoide.llm.base import Done, TextDelta, ToolCall, Usage
from omoide.memory.diary import SAVE_MEMORY
from omoide.memory.prompt.layers import assemble
from omoide.memory.prompt.model import PromptContext
from tests.faultserver import FaultServer, Reply

DATA = Path(__file__).parent / "data"
KEY = "sk-ant-test-key"


def backend(server: FaultServer) -> AnthropicBackend:
    return AnthropicBackend(Settings(backend="anthropic", base_url=f"http://127.0.0.1:{server.port}", model="claude-test",
                                     api_key=Secret(KEY), max_retries=1).backend)


def recorded(name: str, split: int = 13) -> Reply:
    body = (DATA / name).read_bytes()
    return Reply(chunks=[body[i : i + split] for i in range(0, len(body), split)])


def prompt_messages() -> list:
    from datetime import UTC, datetime

    from omoide.domain.chat import Message, Role

    t = datetime(2026, 4, 1, tzinfo=UTC)
    state = MemoryState(
        summary=Summary(1, 1, 1, None, None, "They met at the café.", t),
        window=[Message(i, 1, None, Role.USER if i % 2 else Role.ASSISTANT, f"m{i}", t) for i in range(1, 6)],
    )
    return assemble(PromptContext(character=Character(id="s", name="Suzune"), now=t), state).messages


async def test_a_recorded_stream_gives_text_a_tool_call_and_cache_usage(fault_server: FaultServer) -> None:
    fault_server.queue(recorded("anthropic_tool_use.sse"))
    b = backend(fault_server)
    events = [e async for e in b.stream(prompt_messages(), tools=[SAVE_MEMORY])]
    await b.aclose()
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "*sets the cup down* Black, like always. ☕"
    calls = [e for e in events if isinstance(e, ToolCall)]
    assert [(c.id, c.name, c.arguments) for c in calls] == [("toolu_01", "save_memory", {"content": "He came back in the rain."})]
    usage = next(e for e in events if isinstance(e, Usage))
    assert (usage.prompt_tokens, usage.cache_read_tokens, usage.cache_write_tokens, usage.completion_tokens) == (18, 1432, 0, 41)
    assert events[-1] == Done("tool_calls")

    request = fault_server.requests[0]
    assert request.path == "/v1/messages" and request.headers["x-api-key"] == KEY
    assert request.headers["anthropic-version"] == "2023-06-01"
    body = request.json()
    assert body["tools"][0]["name"] == "save_memory" and "input_schema" in body["tools"][0]
    roles = [m["role"] for m in body["messages"]]
    assert all(a != b for a, b in zip(roles, roles[1:])) and body["system"][0]["cache_control"] == {"type": "ephemeral"}


async def test_an_error_inside_the_stream_ends_the_reply_keeping_the_text(fault_server: FaultServer) -> None:
    fault_server.queue(recorded("anthropic_overloaded.sse", split=7))
    b = backend(fault_server)
    received = []
    with pytest.raises(ServerFailed, match="overloaded_error"):
        async for event in b.stream(prompt_messages()):
            if isinstance(event, TextDelta):
                received.append(event.text)
    await b.aclose()
    assert received == ["The harbour was"]


async def test_a_bad_key_is_reported_without_showing_it(fault_server: FaultServer) -> None:
    fault_server.queue(Reply(status=401, body=b'{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}'))
    b = backend(fault_server)
    with pytest.raises(AuthenticationFailed) as info:
        [e async for e in b.stream(prompt_messages())]
    await b.aclose()
    assert KEY not in str(info.value) and "invalid x-api-key" in info.value.message


def test_cache_breakpoints_sit_at_the_stable_layers_and_never_exceed_four() -> None:
    system, turns = to_anthropic(prompt_messages())
    marked = [b for b in system if "cache_control" in b] + [b for t in turns for b in t["content"] if "cache_control" in b]
    assert 1 <= len(marked) <= 4
    assert system[0]["text"].startswith("You are Suzune") and "cache_control" in system[0]
    assert system[1]["text"].startswith("## Recent Conversation Summary") and "cache_control" in system[1]
    assert not any("Current date and time" in b["text"] for b in system), "the volatile tail is not in system"
    tail = turns[-1]["content"][-1]
    assert turns[-1]["role"] == "user" and tail["text"].startswith("Current date and time") and "cache_control" not in tail
    assert turns[-1]["content"][-2] == {"type": "text", "text": "[04/01 00:00] m5", "cache_control": {"type": "ephemeral"}}
    roles = [t["role"] for t in turns]
    assert all(a != b for a, b in zip(roles, roles[1:]))


def test_many_system_blocks_still_get_at_most_four_breakpoints() -> None:
    messages = [{"role": "system", "content": f"layer {i}"} for i in range(7)] + [{"role": "user", "content": "hi"}]
    system, turns = to_anthropic(messages)  # type: ignore[arg-type]
    marked = [b for b in system if "cache_control" in b] + [b for t in turns for b in t["content"] if "cache_control" in b]
    assert len(marked) == 4 and "cache_control" in turns[-1]["content"][-1]


async def test_cache_figures_reach_the_inspector_and_the_status_bar(fault_server: FaultServer, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from omoide.chat.session import ChatSession
    from omoide.store import Store
    from omoide.tui.app import OmoideApp
    from omoide.tui.screens.inspector import inspector_text

    streams = [recorded("anthropic_tool_use.sse"), recorded("anthropic_text.sse")]

    def reply(request):  # type: ignore[no-untyped-def]
        return Reply(status=404, body=b"{}") if "count_tokens" in request.path else streams.pop(0)

    fault_server.queue(*[reply] * 12)
    store = await Store.open(tmp_path / "omoide.db")
    b = backend(fault_server)
    settings = Settings(backend="anthropic", api_key=Secret(KEY), tools="native")
    session = await ChatSession.open(store, Character(id="s", name="Suzune", first_message="Hi."), settings, b)
    app = OmoideApp(session)
    async with app.run_test(size=(110, 30)) as pilot:
        app.query_one("#input").value = "Coffee?"
        await pilot.press("enter")
        for _ in range(200):
            if session.last_prompt is not None and session.last_prompt.usage is not None:
                break
            await pilot.pause(0.05)
        await pilot.pause(0.2)
        assert "25 prompt tokens, 1432 read from its prompt cache, 60 written to it" in inspector_text(session.last_prompt)
        assert "cache: 1432 read, 60 written" in app.query_one("StatusBar").render()
        assert [e.content for e in (await session.memory()).diary] == ["He came back in the rain."]
    await store.close()
    await b.aclose()


async def test_overloaded_529_is_retried_before_the_first_byte(fault_server: FaultServer) -> None:
    overloaded = b'{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'
    fault_server.queue(Reply(status=529, headers={"retry-after": "0"}, body=overloaded), recorded("anthropic_text.sse"))
    b = backend(fault_server)
    events = [e async for e in b.stream(prompt_messages())]
    await b.aclose()
    assert len(fault_server.requests) == 2 and any(isinstance(e, TextDelta) for e in events)
    assert isinstance(events[-1], Done)


async def test_an_unknown_model_is_named(fault_server: FaultServer) -> None:
    fault_server.queue(Reply(status=404, body=b'{"type":"error","error":{"type":"not_found_error","message":"model: claude-test"}}'))
    b = backend(fault_server)
    with pytest.raises(ModelNotFound) as info:
        [e async for e in b.stream(prompt_messages())]
    await b.aclose()
    assert "claude-test" in info.value.message and len(fault_server.requests) == 1


async def test_a_stall_mid_stream_keeps_what_arrived(fault_server: FaultServer) -> None:
    body = (DATA / "anthropic_overloaded.sse").read_bytes()
    head = body[: body.index(b"event: error")]
    fault_server.queue(Reply(chunks=[head, 3.0, b"event: message_stop\n"]))
    b = AnthropicBackend(Settings(backend="anthropic", base_url=f"http://127.0.0.1:{fault_server.port}",
                                  api_key=Secret(KEY), stall_timeout=0.5).backend)
    received = []
    with pytest.raises(StreamStalled):
        async for event in b.stream(prompt_messages()):
            if isinstance(event, TextDelta):
                received.append(event.text)
    await b.aclose()
    assert received == ["The harbour was"] and len(fault_server.requests) == 1


def test_marked_messages_get_breakpoints_and_tool_results_share_a_turn() -> None:
    messages = [
        {"role": "system", "content": "card"},
        {"role": "user", "content": "old"},
        {"role": "assistant", "content": "older reply"},
        {"role": "user", "content": "remember two things"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "save_memory", "arguments": '{"content": "one"}'}},
            {"id": "b", "type": "function", "function": {"name": "save_memory", "arguments": '{"content": "two"}'}},
        ]},
        {"role": "tool", "tool_call_id": "a", "content": "saved"},
        {"role": "tool", "tool_call_id": "b", "content": "saved"},
        {"role": "system", "content": "Current date and time: now"},
    ]
    system, turns = to_anthropic(messages)  # type: ignore[arg-type]
    assert [t["role"] for t in turns] == ["user", "assistant", "user", "assistant", "user"]
    assert [b["tool_use_id"] for b in turns[4]["content"][:2]] == ["a", "b"]
    assert [b["input"] for b in turns[3]["content"]] == [{"content": "one"}, {"content": "two"}]
    assert [b["text"] for b in system] == ["card"]
    assert turns[4]["content"][-1] == {"type": "text", "text": "Current date and time: now"}
    # the window ends with the tool results: the breakpoint sits there, before the tail
    assert turns[4]["content"][1]["cache_control"] == {"type": "ephemeral"}


async def test_count_tokens_asks_the_api_and_stops_where_it_is_missing(fault_server: FaultServer) -> None:
    fault_server.queue(Reply(body=b'{"input_tokens": 1234}'), Reply(status=404, body=b"{}"))
    b = backend(fault_server)
    exact = await b.count_tokens(prompt_messages())
    missing = await b.count_tokens(prompt_messages())
    again = await b.count_tokens(prompt_messages())
    await b.aclose()
    assert (exact.tokens, exact.exact) == (1234, True) and not missing.exact and missing == again
    assert [r.path for r in fault_server.requests] == ["/v1/messages/count_tokens"] * 2


def test_a_chat_that_opens_with_the_greeting_still_starts_with_a_user_turn() -> None:
    _, turns = to_anthropic([{"role": "system", "content": "card"}, {"role": "assistant", "content": "*waves* Hi!"},
                             {"role": "user", "content": "Hello"}])
    assert [t["role"] for t in turns] == ["user", "assistant", "user"]
    assert turns[1]["content"][0]["text"] == "*waves* Hi!"


async def test_two_consecutive_turns_share_the_whole_window_prefix_byte_for_byte(fault_server: FaultServer, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The second request starts with exactly the bytes the first cached (system,
    then every message up to the first request's window breakpoint), although
    the clock moved, a diary line was written and a lore entry fired in between."""
    import json
    from datetime import UTC, datetime, timedelta

    from omoide.characters.model import LoreEntry, Lorebook
    from omoide.chat.session import ChatSession
    from omoide.store import Store

    def reply(request):  # type: ignore[no-untyped-def]
        return Reply(status=404, body=b"{}") if "count_tokens" in request.path else recorded("anthropic_text.sse")

    fault_server.queue(*[reply] * 12)
    store = await Store.open(tmp_path / "omoide.db")
    b = backend(fault_server)
    settings = Settings(backend="anthropic", api_key=Secret(KEY), tools="native")
    lore = Lorebook(entries=[LoreEntry(keys=["lighthouse"], content="The lighthouse has been dark since the storm.")])
    suzune = Character(id="s", name="Suzune", first_message="Hi.", character_book=lore)
    session = await ChatSession.open(store, suzune, settings, b)
    session.clock = lambda: datetime(2026, 4, 1, 20, 15, tzinfo=UTC)
    _ = [e async for e in session.send("Coffee?")]
    await session.user.remember("He takes it black.")
    session.clock = lambda: datetime(2026, 4, 1, 20, 15, tzinfo=UTC) + timedelta(hours=1, minutes=7)
    _ = [e async for e in session.send("Is the lighthouse lit tonight?")]
    await store.close()
    await b.aclose()
    first, second = [r.json() for r in fault_server.requests if r.path == "/v1/messages"]

    def blocks(body):  # type: ignore[no-untyped-def]
        """The request's content in the order a prompt cache reads it."""
        out = [("system", block) for block in body["system"]]
        return out + [(turn["role"], block) for turn in body["messages"] for block in turn["content"]]

    def plain(items):  # type: ignore[no-untyped-def]
        return json.dumps([(role, {k: v for k, v in block.items() if k != "cache_control"}) for role, block in items], ensure_ascii=False).encode()

    one, two = blocks(first), blocks(second)
    end = max(i for i, (_, block) in enumerate(one) if "cache_control" in block)  # the first request's window breakpoint
    assert one[end][1]["text"].endswith("Coffee?") and one[end + 1][1]["text"].startswith("Current date and time")
    assert plain(two[: end + 1]) == plain(one[: end + 1]), "the window prefix changed between turns"
    assert not any("Current date and time" in block["text"] for _, block in blocks(second)[: end + 1])
    tail = second["messages"][-1]["content"][-1]["text"]
    assert "21:22" in tail and "He takes it black." in tail and "lighthouse has been dark" in tail
