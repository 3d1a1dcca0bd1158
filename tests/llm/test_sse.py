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
    assert [e.data for e in parse_in_chunks(data, cuts)] == [p[1:] if p.startswith(" ") else p for p in payloads]


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


@given(st.lists(st.text(max_size=12), max_size=10))
def test_any_fragmentation_of_arguments_gives_the_same_call(parts: list[str]) -> None:
    text = "".join(parts)
    acc = ToolCallAccumulator()
    acc.feed([{"index": 0, "id": "c", "function": {"name": "save_memory"}}])
    for part in parts:
        acc.feed([{"index": 0, "function": {"arguments": json.dumps({"content": text})[: 0] + part}}])
    (call,) = acc.finish()
    assert call.raw_arguments == text
