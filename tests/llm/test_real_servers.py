"""Against real models: llama.cpp's OpenAI-compatible server (the engine over
HTTP) and the embedded backend (the engine in process), both running the
shipped SmolLM2-135M-Instruct."""

from __future__ import annotations

import asyncio
import json
import threading
import time

import pytest

from omoide.config.settings import Settings
from omoide.llm.base import ChatMessage, Done, TextDelta, ToolCall, Usage
from omoide.llm.local import LocalBackend
from omoide.llm.openai_compat import OpenAICompatBackend
from omoide.memory.diary import SAVE_MEMORY

pytestmark = pytest.mark.model
HELLO = [{"role": "system", "content": "You are a friendly barista."}, {"role": "user", "content": "Say hello in one sentence."}]


WHY_A_DOUBLE = (
    "A double: llama.cpp's server parses native tool calls only where the chat template has a tool-call "
    "format, and for `tool_choice: required` its grammar still lets text come first; SmolLM2-135M, the only "
    "model the tests have that is quick enough, writes that text until max_tokens and never reaches the call "
    "(measured with a Hermes-style template, docs/engine.md). The double streams what llama.cpp sends for a "
    "parsed call: the call's id and name, then its arguments in fragments, then finish_reason tool_calls. "
    "An unforced call from the real server is tested for real (test_a_real_llama_cpp_server_streams_a_native_save_memory_call)."
)


def _chat_server(fault_server, turns: list[object]) -> None:  # type: ignore[no-untyped-def]
    """`fault_server` answers /chat/completions with `turns` in order (a tool
    call as (name, arguments), or text), and 404 to anything else."""
    from tests.faultserver import Reply, sse, stream_reply

    pending = list(turns)

    def answer(request):  # type: ignore[no-untyped-def]
        if not request.path.endswith("/chat/completions") or not pending:
            return Reply(status=404, body=b'{"error": "not here"}')
        turn = pending.pop(0)
        if isinstance(turn, str):
            return stream_reply(turn)
        name, arguments = turn  # type: ignore[misc]
        text = json.dumps(arguments)
        head = {"index": 0, "id": "call_1", "type": "function", "function": {"name": name, "arguments": ""}}
        pieces = [{"index": 0, "function": {"arguments": text[i:i + 7]}} for i in range(0, len(text), 7)]
        chunks = [{"choices": [{"index": 0, "delta": {"tool_calls": [d]}, "finish_reason": None}]} for d in [head, *pieces]]
        return Reply(chunks=[sse(*chunks, {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}, "[DONE]")])

    fault_server.queue(*[answer] * 64)


async def test_a_real_server_streams_a_reply(llama_server: str) -> None:
    backend = OpenAICompatBackend(Settings(base_url=llama_server, model="smollm2", max_tokens=24, temperature=0.0).backend)
    events = [e async for e in backend.stream(HELLO)]
    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    await backend.aclose()
    assert len([e for e in events if isinstance(e, TextDelta)]) > 1, "the reply should arrive in several pieces"
    assert text.strip()
    assert isinstance(events[-1], Done)


async def test_a_real_llama_cpp_server_streams_a_native_save_memory_call(llama_server_hermes: str) -> None:
    """A native tool call from a real server, end to end: llama.cpp's server,
    given a chat template with a tool-call format, parses the <tool_call> the
    model writes and streams it as tool_calls deltas; omoide assembles one call.
    SmolLM2-135M writes the call when it has seen three earlier ones (greedy);
    the forced-choice tests below need a double (WHY_A_DOUBLE)."""
    examples = ["my dog is called Rex", "my sister lives in Kyoto", "I like green tea"]
    messages: list[ChatMessage] = [{"role": "system", "content": "You keep a diary with the save_memory tool. "
                                    "Every time the user says remember, call save_memory."}]
    for i, fact in enumerate(examples):
        messages.append({"role": "user", "content": f"Remember that {fact}."})
        messages.append({"role": "assistant", "content": "", "tool_calls": [{"id": f"call_{i}", "type": "function", "function": {
            "name": "save_memory", "arguments": json.dumps({"content": f"The user said {fact}."})}}]})
    messages.append({"role": "user", "content": "Remember that my cat is called Mochi."})
    backend = OpenAICompatBackend(Settings(base_url=llama_server_hermes, model="smollm2", max_tokens=80, temperature=0.0).backend)
    events = [e async for e in backend.stream(messages, tools=[SAVE_MEMORY], tool_choice="auto")]
    await backend.aclose()
    calls = [e for e in events if isinstance(e, ToolCall)]
    assert [c.name for c in calls] == ["save_memory"]
    assert "Mochi" in str(calls[0].arguments.get("content"))


async def test_a_forced_tool_call_arrives_whole(fault_server) -> None:  # type: ignore[no-untyped-def]
    """A forced save_memory call streamed in fragments arrives as one ToolCall.
    A double, not the real server: see WHY_A_DOUBLE."""
    _chat_server(fault_server, [("save_memory", {"content": "The user's cat is called Mochi."})])
    backend = OpenAICompatBackend(Settings(base_url=fault_server.base_url, model="smollm2", max_tokens=96, temperature=0.0).backend)
    messages = [
        {"role": "system", "content": "You keep a diary with the save_memory tool."},
        {"role": "user", "content": "Remember that my cat is called Mochi."},
    ]
    events = [e async for e in backend.stream(
        messages, tools=[SAVE_MEMORY], tool_choice={"type": "function", "function": {"name": "save_memory"}},
    )]
    await backend.aclose()
    calls = [e for e in events if isinstance(e, ToolCall)]
    assert len(calls) == 1
    assert calls[0].name == "save_memory"
    assert isinstance(calls[0].arguments.get("content"), str) and calls[0].arguments["content"].strip()


async def test_the_llama_cpp_server_counts_through_its_own_template_exactly(llama_server: str) -> None:
    """llama.cpp's server applies its chat template (/apply-template) and
    tokenizes (/tokenize), so its counts are exact: what a reply's usage says
    it evaluated. (A server with only a tokenizer, as llama-cpp-python's had, gets
    counts marked as estimates: tests/llm/test_openai_backend.py, a fault server.)"""
    backend = OpenAICompatBackend(Settings(base_url=llama_server, model="smollm2", max_tokens=1).backend)
    short = await backend.count_tokens([{"role": "user", "content": "hi"}])
    long = await backend.count_tokens([{"role": "user", "content": "hi " * 50}])
    check = await backend.check()
    usage = [e async for e in backend.stream([{"role": "user", "content": "hi " * 50}]) if isinstance(e, Usage)]
    await backend.aclose()
    assert short.exact and long.exact and long.tokens > short.tokens + 40
    assert "template" in long.method
    assert usage and usage[-1].prompt_tokens == long.tokens
    assert "answers" in check


@pytest.fixture(scope="module")
def local_backend(smollm2_path) -> LocalBackend:  # type: ignore[no-untyped-def]
    return LocalBackend(Settings(max_tokens=32, temperature=0.0, context_size=2048))


async def test_the_embedded_model_streams_a_reply(local_backend: LocalBackend) -> None:
    events = [e async for e in local_backend.stream(HELLO)]
    deltas = [e for e in events if isinstance(e, TextDelta)]
    assert len(deltas) > 1 and "".join(d.text for d in deltas).strip()
    assert any(isinstance(e, Usage) for e in events) and isinstance(events[-1], Done)


async def test_the_embedded_count_is_what_the_model_evaluates(local_backend: LocalBackend) -> None:
    messages = [*HELLO, {"role": "assistant", "content": "Hello! Coffee?"}, {"role": "user", "content": "Yes, café au lait 🍵."}]
    count = await local_backend.count_tokens(messages)  # type: ignore[arg-type]
    engine = local_backend.engine()
    evaluated = engine.post("/v1/chat/completions", {"messages": messages, "max_tokens": 1, "cache_prompt": False})["usage"]["prompt_tokens"]
    rendered = local_backend.render_prompt(messages)  # type: ignore[arg-type]
    assert count.exact and count.tokens == evaluated
    assert local_backend.tokenize(rendered)[:2] == engine.tokenize("<|im_start|>system")
    assert rendered.endswith("<|im_start|>assistant\n")


async def test_the_embedded_reply_reports_its_prompt_size(local_backend: LocalBackend) -> None:
    events = [e async for e in local_backend.stream(HELLO, max_tokens=4)]
    usage = [e for e in events if isinstance(e, Usage)]
    assert usage and usage[-1].prompt_tokens == (await local_backend.count_tokens(HELLO)).tokens  # type: ignore[arg-type]
    assert 1 <= (usage[-1].completion_tokens or 0) <= 4


async def test_a_prompt_too_long_for_the_embedded_model_says_what_to_do(local_backend: LocalBackend) -> None:
    from omoide.errors import BadRequest

    huge = [{"role": "user", "content": "memory " * 3000}]
    started = time.monotonic()
    with pytest.raises(BadRequest) as info:
        [e async for e in local_backend.stream(huge)]  # type: ignore[arg-type]
    assert "context" in info.value.message and "context_size" in info.value.hint
    assert time.monotonic() - started < 5, "refused before any generation"


async def test_cancelling_stops_the_embedded_model_promptly(local_backend: LocalBackend) -> None:
    backend = LocalBackend(Settings(max_tokens=2000, temperature=0.8, context_size=2048))
    first = asyncio.Event()

    async def consume() -> None:
        async for event in backend.stream([{"role": "user", "content": "Write a very long story about the sea."}]):
            if isinstance(event, TextDelta):
                first.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(first.wait(), 60)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    started = time.monotonic()
    while any(t.name == "omoide-local-llm" for t in threading.enumerate()) and time.monotonic() - started < 5:
        await asyncio.sleep(0.05)
    assert not any(t.name == "omoide-local-llm" for t in threading.enumerate())
    assert time.monotonic() - started < 2.0


async def test_cancelling_during_a_long_prompt_stops_at_once_and_leaves_the_model_sound(local_backend: LocalBackend) -> None:
    async def reply() -> str:
        return "".join([e.text async for e in local_backend.stream(HELLO, max_tokens=8) if isinstance(e, TextDelta)])

    def long(subject: str, times: int) -> list[dict[str, str]]:
        return [{"role": "user", "content": f"The {subject} was calm and grey that morning. " * times + f"What colour was the {subject}?"}]

    before = await reply()
    # The yardstick is this machine, now: how long a prompt takes a token (a
    # different prompt, so the cancelled one is not read from the cache).
    yardstick = long("sky", 30)
    started = time.monotonic()
    [e async for e in local_backend.stream(yardstick, max_tokens=1)]  # type: ignore[arg-type]
    per_token = (time.monotonic() - started) / (await local_backend.count_tokens(yardstick)).tokens  # type: ignore[arg-type]
    prompt = long("sea", 170)
    assert 1200 < (await local_backend.count_tokens(prompt)).tokens < 2000  # type: ignore[arg-type]
    task = asyncio.create_task(anext(local_backend.stream(prompt)))  # type: ignore[arg-type]
    await asyncio.sleep(300 * per_token)  # the prompt is being evaluated: no token has come out yet
    started = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    while any(t.name == "omoide-local-llm" for t in threading.enumerate()) and time.monotonic() - started < 2000 * per_token:
        await asyncio.sleep(0.02)
    stopped = time.monotonic() - started
    # A stop takes effect within one batch (128 tokens); 600 is half of what the prompt has left.
    assert stopped < 600 * per_token, f"the model kept evaluating a prompt nobody waits for ({stopped:.1f} s, {per_token * 1000:.0f} ms a token)"
    assert await reply() == before, "the next reply is the same as before the interruption"


async def test_the_ui_loop_stays_responsive_while_the_model_generates(local_backend: LocalBackend) -> None:
    gaps: list[float] = []
    done = False

    async def ticker() -> None:
        last = time.monotonic()
        while not done:
            await asyncio.sleep(0.01)
            now = time.monotonic()
            gaps.append(now - last)
            last = now

    tick = asyncio.create_task(ticker())
    [e async for e in local_backend.stream(HELLO)]
    done = True
    await tick
    assert max(gaps) < 0.25, f"the event loop was blocked for {max(gaps):.2f} s"


async def test_the_session_saves_a_diary_entry_from_a_real_native_tool_call(fault_server, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The character calls save_memory mid-reply (forced on the first round, as a
    real model would choose to): the entry is saved, the result goes back, and the
    reply continues in the same turn. A double, not the real server: see WHY_A_DOUBLE."""
    from omoide.characters.model import Character
    from omoide.chat.events import DiarySaved, ReplyFinished
    from omoide.chat.session import ChatSession
    from omoide.store import Store

    class FirstRoundForced(OpenAICompatBackend):
        rounds = 0

        def stream(self, messages, *, tools=None, tool_choice=None, max_tokens=None, cache_key=None):  # type: ignore[no-untyped-def]
            self.rounds += 1
            forced = {"type": "function", "function": {"name": "save_memory"}} if self.rounds == 1 else None
            return super().stream(messages, tools=tools if self.rounds == 1 else None, tool_choice=forced, max_tokens=max_tokens, cache_key=cache_key)

    _chat_server(fault_server, [("save_memory", {"content": "Kai's cat is called Mochi."}), "*She smiles.* Mochi. I will remember."])
    settings = Settings(base_url=fault_server.base_url, model="smollm2", max_tokens=64, temperature=0.0, tools="native")
    backend = FirstRoundForced(settings.backend)
    store = await Store.open(tmp_path / "omoide.db")
    session = await ChatSession.open(store, Character(id="mika", name="Mika", first_message="Hi!"), settings, backend)
    events = [e async for e in session.send("Please remember that my cat is called Mochi.")]
    saved = [e.entry for e in events if isinstance(e, DiarySaved)]
    finished = [e for e in events if isinstance(e, ReplyFinished)]
    diary = (await session.memory()).diary
    await store.close()
    await backend.aclose()
    assert len(saved) == 1 and saved[0].content.strip()
    assert [e.content for e in diary] == [saved[0].content]
    assert backend.rounds == 2 and finished
    assert finished[0].message.tool_calls and finished[0].message.tool_calls[0]["name"] == "save_memory"


async def test_the_real_server_makes_a_memo_end_to_end(llama_server: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """memory_style 'memos', llama_cpp.server as the summarizer: once a batch of 8
    messages is full, the background worker asks the server and the book gets a
    memo that keeps the cat's name. The 135M model mostly writes no highlights, or
    highlights of another story: then the memo keeps the batch's own sentences,
    so the name is kept whatever the model wrote."""
    from omoide.characters.model import Character
    from omoide.domain.chat import Role
    from omoide.chat.session import ChatSession
    from omoide.store import Store
    from tests.scripted import ScriptedBackend

    settings = Settings(base_url=llama_server, model="smollm2", temperature=0.0, context_size=2048, memory_style="memos", user_name="Kai")
    summarizer = OpenAICompatBackend(settings.backend)
    store = await Store.open(tmp_path / "omoide.db")
    session = await ChatSession.open(store, Character(id="mika", name="Mika", first_message="Welcome to my bakery!"), settings,
                                     ScriptedBackend(), summarizer=summarizer)
    lines = ["I found a stray cat outside.", "Oh! Let's give it a name.", "I named the cat Mochi.", "Mochi it is. Here, take my grandmother's silver whisk.",
             "Thank you, I will keep it forever.", "Promise you'll come to the autumn fair with me?", "I promise."]
    head = session.chat.head_id
    for i, line in enumerate(lines):
        head = (await store.messages.add(session.chat.id, head, Role.USER if i % 2 == 0 else Role.ASSISTANT, line)).id
    session.memory_worker.schedule(head)
    await session.wait_for_memory_work()
    pages = await session.book.pages()
    await store.close()
    await summarizer.aclose()
    assert len(pages) == 1
    memo = pages[0]
    assert not memo.gap, f"no memo: {memo.reason}"
    assert 1 <= len(memo.highlights) <= 3 and "Mochi" in " ".join(memo.highlights), memo.highlights


async def test_the_session_answers_a_real_native_recall_call_and_the_reply_continues(fault_server, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The character calls recall (forced on the first round): the story is
    searched, the excerpt goes back as the tool result, and the reply continues.
    A double, not the real server: see WHY_A_DOUBLE."""
    from omoide.characters.model import Character
    from omoide.chat.events import MemoryRecalled, ReplyFinished
    from omoide.chat.session import ChatSession
    from omoide.store import Store
    from tests.scripted import ScriptedBackend

    class FirstRoundForced(OpenAICompatBackend):
        rounds = 0
        sent: list[list[dict[str, object]]] = []

        def stream(self, messages, *, tools=None, tool_choice=None, max_tokens=None, cache_key=None):  # type: ignore[no-untyped-def]
            self.rounds += 1
            self.sent.append([dict(m) for m in messages])
            forced = {"type": "function", "function": {"name": "recall"}} if self.rounds == 1 else None
            offered = [t for t in tools or [] if t.name == "recall"] if self.rounds == 1 else None
            return super().stream(messages, tools=offered, tool_choice=forced, max_tokens=max_tokens, cache_key=cache_key)

    store = await Store.open(tmp_path / "omoide.db")
    mika = Character(id="mika", name="Mika", first_message="Hi!")
    seeded = await ChatSession.open(store, mika, Settings(recent_messages=2, summary_threshold=100), ScriptedBackend(default=lambda m: ["Mm."]))
    for text in ["My grandmother kept the lighthouse on the northern cape.", "small talk", "more small talk", "the weather"]:
        [e async for e in seeded.send(text)]
    _chat_server(fault_server, [("recall", {"query": "lighthouse cape"}), "*She thinks.* Your grandmother kept it."])
    settings = Settings(base_url=fault_server.base_url, model="smollm2", max_tokens=48, temperature=0.0, tools="native",
                        recall_tool=True, recent_messages=2, summary_threshold=100)
    backend = FirstRoundForced(settings.backend)
    session = await ChatSession.open(store, mika, settings, backend, chat_id=seeded.chat.id)
    events = [e async for e in session.send("Who kept the lighthouse on the cape? Search your memory.")]
    recalled = [e for e in events if isinstance(e, MemoryRecalled)]
    finished = [e for e in events if isinstance(e, ReplyFinished)]
    await store.close()
    await backend.aclose()
    assert len(recalled) == 1 and recalled[0].query.strip(), "the real model filled in a query"
    assert backend.rounds == 2 and finished, "the reply continued after the tool result in the same turn"
    assert finished[0].message.tool_calls and finished[0].message.tool_calls[0]["name"] == "recall"
    result = backend.sent[1][-1]
    assert result["role"] == "tool" and isinstance(result["content"], str)
    if any("lighthouse" in w or "cape" in w for w in recalled[0].query.lower().split()):
        assert "grandmother kept the lighthouse" in result["content"]


async def test_a_60_message_prompt_counts_what_the_real_server_evaluates(llama_server_own_template: str, smollm2_path, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The whole prompt is counted once through the chat template: the embedded
    count (exact) is what llama.cpp's server evaluates for the same prompt, and
    the OpenAI-compatible backend's count through that server's /apply-template
    is exact as well. (The embedded model is told to use the
    chat template here: by default it reads a chat as a play script, which a
    server never sees.)"""
    import httpx

    local_backend = LocalBackend(Settings(max_tokens=32, temperature=0.0, context_size=2048, embedded_prompt="chat"))

    llama_server = llama_server_own_template

    from omoide.characters.model import Character
    from omoide.domain.chat import Role
    from omoide.llm.base import WIRE_KEYS
    from omoide.chat.session import ChatSession
    from omoide.store import Store

    settings = Settings(user_name="Kai", context_size=2048, max_tokens=32, recent_messages=60, summary_threshold=200)
    store = await Store.open(tmp_path / "o.db")
    mika = Character(id="mika", name="Mika", first_message="Hi!", description="Mika keeps a small bakery by the station.")
    session = await ChatSession.open(store, mika, settings, local_backend)
    head = session.chat.head_id
    for i in range(60):
        role = Role.USER if i % 2 == 0 else Role.ASSISTANT
        head = (await store.messages.add(session.chat.id, head, role, f"Warm bread {i}.")).id
    assert head is not None
    prompt = await session.build_prompt(head)
    remote = OpenAICompatBackend(Settings(base_url=llama_server, model="smollm2", user_name="Kai", context_size=2048, max_tokens=32).backend)
    estimated = await ChatSession(store, mika, settings, remote, session.chat).build_prompt(head)
    async with httpx.AsyncClient(timeout=300) as client:
        body = {"model": "smollm2", "max_tokens": 1, "messages": [{k: v for k, v in m.items() if k in WIRE_KEYS} for m in prompt.messages]}
        evaluated = (await client.post(f"{llama_server}/chat/completions", json=body)).json()["usage"]["prompt_tokens"]
    await remote.aclose()
    await store.close()
    assert len([m for m in prompt.messages if m["role"] != "system"]) == 61 and not prompt.dropped
    assert prompt.exact and prompt.total_tokens == evaluated
    assert sum(layer.tokens for layer in prompt.layers) == prompt.total_tokens
    # Counted through that server's own template: exact for its prompt, which lays the tail out as a server gets it.
    assert estimated.exact and abs(estimated.total_tokens - evaluated) <= evaluated * 0.05


async def test_a_whole_end_of_conversation_pass_against_a_real_server(llama_server: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Every step asks the real model; each one is either applied or logged as
    failed with the previous memory kept, and the conversation is accounted for."""
    from omoide.characters.library import find_character
    from omoide.chat.session import ChatSession
    from omoide.store import Store
    from omoide.domain.world import Field, UpdateKind, user_key
    from tests.scripted import ScriptedBackend

    summarizer = OpenAICompatBackend(Settings(base_url=llama_server, model="smollm2", temperature=0.0).backend)
    async with await Store.open(tmp_path / "omoide.db") as store:
        chat = ScriptedBackend([["*She slides a black coffee across the counter.* Good luck on Friday, I suppose."]])
        settings = Settings(user_name="Kai", world_max_tokens=48)  # a small model rambles to the limit; keep it short
        session = await ChatSession.open(store, find_character("suzune"), settings, chat, summarizer=summarizer)
        async for _ in session.send("My exam is on Friday. Also, Wren told me she is afraid of the dark."):
            pass
        conversation = await session.end_conversation(background=False)
        result = await session.world.run(conversation.id)
        await session.aclose()
        await summarizer.aclose()
        log = await store.world.updates(conversation_id=conversation.id)
        view = await store.world.view("suzune")
    steps = {u.step for u in log}
    assert {"summary", "familiarity"} <= steps or "summary" in {u.step for u in log if u.kind is UpdateKind.FAILED}
    assert all(u.model == "openai · smollm2" for u in log if u.kind in (UpdateKind.LLM, UpdateKind.FAILED))
    assert [m.key for m in conversation.mentions] == ["wren"]
    if not any(u.step == "summary" and u.kind is UpdateKind.FAILED for u in log):
        assert view.summaries and view.summaries[0].text.strip()
        assert view.about(user_key("Kai")).familiarity > 0
        assert {"memory", "goal", "descriptor", "global"} <= steps
    for u in log:
        if u.kind is UpdateKind.FAILED:
            assert u.error and u.field in Field
    assert len(result.failed) == sum(1 for u in log if u.kind is UpdateKind.FAILED)


async def test_the_servers_count_keeps_a_continuation_the_cautious_estimate_would_send_alone(llama_server: str) -> None:
    """Near the context's end the estimate (3 characters a token) says a memory
    request will not fit after the chat's prompt; the server's own tokenizer
    decides then, and the request continues the prompt when it fits, so the
    next reply finds its prefix still cached. Past the count it stands alone."""
    from omoide.memory.shared import ChatPrefix, continue_chat, continued, fits

    backend = OpenAICompatBackend(Settings(base_url=llama_server, model="smollm2").backend)
    try:
        chat: list[ChatMessage] = [
            {"role": "system", "content": "Mika keeps a small bakery by the river. " * 20},
            {"role": "user", "content": "How is the oven today? " * 10},
            {"role": "assistant", "content": "*She dusts flour off her hands.* Hot and ready for the morning bread. " * 5},
        ]
        prefix = ChatPrefix(chat, (await backend.count_tokens(chat)).tokens)
        request: list[ChatMessage] = [{"role": "user", "content": "Summarize the following conversation. " + "Kai: The rain is heavy. " * 60}]
        count = await backend.count_tokens(continue_chat(prefix, request))
        assert count.tokenized
        room = count.tokens + 200 + (0 if count.exact else 32)
        assert not fits(prefix, request, max_tokens=200, context_size=room)  # the estimate alone would say no
        assert await continued(backend, prefix, request, max_tokens=200, context_size=room) == continue_chat(prefix, request)
        assert await continued(backend, prefix, request, max_tokens=200, context_size=room - 16) == request
    finally:
        await backend.aclose()

