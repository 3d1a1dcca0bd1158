"""SSE parsing from bytes and tool-call accumulation."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from omoide.llm.sse import SSEEvent, SSEParser
from omoide.llm.toolcalls import ToolCallAccumulator

STREAM = (
    ": keep-alive comment\r\n\r\n"
    'data: {"text": "caf\u00e9 \u601d\u3044\u51fa \U0001f375"}\r\n\r\n'
    "event: ping\ndata: one\ndata: two\n\n"
    "data: [DONE]\n\n"
).encode("utf-8")
EXPECTED = [
    SSEEvent(data='{"text": "café 思い出 🍵"}'),
    SSEEvent(data="one\ntwo", event="ping"),
    SSEEvent(data="[DONE]"),
]


def parse_in_chunks(data: bytes, cuts: list[int]) -> list[SSEEvent]:
    parser = SSEParser()
    points = sorted(set(c for c in cuts if 0 < c < len(data)))
    events = []
    for a, b in zip([0, *points], [*points, len(data)], strict=True):
        events += parser.feed(data[a:b])
    return events + parser.close()


def test_whole_stream_parses() -> None:
    assert parse_in_chunks(STREAM, []) == EXPECTED


def test_byte_by_byte_keeps_multibyte_characters_whole() -> None:
    assert parse_in_chunks(STREAM, list(range(len(STREAM)))) == EXPECTED


@given(st.lists(st.integers(min_value=0, max_value=len(STREAM)), max_size=40))
def test_any_split_of_the_byte_stream_gives_the_same_events(cuts: list[int]) -> None:
    assert parse_in_chunks(STREAM, cuts) == EXPECTED


@given(st.lists(st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n"), max_size=20), min_size=1, max_size=8),
       st.sampled_from(["\n", "\r\n", "\r"]), st.lists(st.integers(min_value=0, max_value=400), max_size=20))
def test_any_line_ending_and_any_split(payloads: list[str], eol: str, cuts: list[int]) -> None:
    data = "".join(f"data: {p}{eol}{eol}" for p in payloads).encode("utf-8")
    # "data: " already holds the one space the spec strips, so each payload comes back whole.
    assert [e.data for e in parse_in_chunks(data, cuts)] == payloads


def test_tool_call_fragments_accumulate_by_index() -> None:
    acc = ToolCallAccumulator()
    acc.feed([{"index": 0, "id": "call_a", "function": {"name": "save_memory", "arguments": ""}}])
    acc.feed([{"index": 1, "id": "call_b", "function": {"name": "save_memory", "arguments": '{"con'}}])
    acc.feed([{"index": 0, "function": {"arguments": '{"content": "He likes '}}])
    acc.feed([{"index": 1, "function": {"arguments": 'tent": "rain"}'}}])
    acc.feed([{"index": 0, "function": {"arguments": 'caf\u00e9s."}'}}])
    calls = acc.finish()
    assert [(c.id, c.name, c.arguments) for c in calls] == [
        ("call_a", "save_memory", {"content": "He likes cafés."}),
        ("call_b", "save_memory", {"content": "rain"}),
    ]


def test_broken_tool_arguments_do_not_crash() -> None:
    acc = ToolCallAccumulator()
    acc.feed([{"index": 0, "id": "x", "function": {"name": "save_memory", "arguments": '{"content": "unfinished'}}])
    (call,) = acc.finish()
    assert call.arguments == {} and call.raw_arguments == '{"content": "unfinished'


@given(st.text(max_size=40), st.lists(st.integers(min_value=0, max_value=120), max_size=12))
def test_any_fragmentation_of_arguments_gives_the_same_call(content: str, cuts: list[int]) -> None:
    raw = json.dumps({"content": content}, ensure_ascii=False)
    points = sorted({c for c in cuts if 0 < c < len(raw)})
    acc = ToolCallAccumulator()
    acc.feed([{"index": 0, "id": "c", "function": {"name": "save_memory", "arguments": ""}}])
    for a, b in zip([0, *points], [*points, len(raw)], strict=True):
        acc.feed([{"index": 0, "function": {"arguments": raw[a:b]}}])
    (call,) = acc.finish()
    assert (call.name, call.arguments, call.raw_arguments) == ("save_memory", {"content": content}, raw)


def test_a_name_repeated_on_every_fragment_is_not_doubled() -> None:
    acc = ToolCallAccumulator()
    acc.feed([{"index": 0, "id": "c", "function": {"name": "save_memory", "arguments": '{"content": '}}])
    acc.feed([{"index": 0, "function": {"name": "save_memory", "arguments": '"x"}'}}])
    (call,) = acc.finish()
    assert call.name == "save_memory" and call.arguments == {"content": "x"}


def test_a_byte_order_mark_and_ids_are_handled() -> None:
    data = "\ufeffid: 7\nevent: delta\ndata: a\n\nid: 8\ndata: b\n\n".encode()
    assert parse_in_chunks(data, list(range(len(data)))) == [SSEEvent("a", "delta", "7"), SSEEvent("b", "message", "8")]


def test_an_event_without_data_is_skipped_and_a_last_event_without_blank_line_counts() -> None:
    assert parse_in_chunks(b"event: ping\n\n: comment\n\ndata: tail", []) == [SSEEvent("tail")]


def test_a_large_stream_fed_byte_by_byte_stays_fast() -> None:
    import time

    data = b"data: " + b"x" * 200_000 + b"\n\n"
    parser = SSEParser()
    started = time.monotonic()
    events = [e for i in range(len(data)) for e in parser.feed(data[i : i + 1])]
    assert len(events) == 1 and len(events[0].data) == 200_000
    assert time.monotonic() - started < 5
