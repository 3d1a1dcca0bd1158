"""The diary tool's form: the refusal fallback tells the model the inline form,
and a server whose model does not call tools is found out once and gets the
inline form (with `doctor` saying which form and why)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from omoide import locations
from omoide.characters.model import Character
from omoide.config.settings import Settings
from omoide.chat.events import DiarySaved
from omoide.llm.openai_compat import OpenAICompatBackend
from omoide.memory.diary import INLINE_INSTRUCTIONS, NATIVE_INSTRUCTIONS, SAVE_MEMORY
from omoide.chat.session import ChatSession
from omoide.store import Store
from omoide.chat.toolform import resolve
from tests.faultserver import FaultServer, Reply, sse, stream_reply, text_chunk

MIKA = Character(id="mika", name="Mika", first_message="Hi!")


def tool_call_reply(content: str) -> Reply:
    call = {"index": 0, "id": "c1", "function": {"name": "save_memory", "arguments": json.dumps({"content": content})}}
    return Reply(chunks=[sse(
        {"choices": [{"index": 0, "delta": {"tool_calls": [call]}, "finish_reason": None}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
        "[DONE]",
    )])


def refusal() -> Reply:
    return Reply(status=400, body=b'{"error": {"message": "registry.ollama.ai/library/gemma:2b does not support tools"}}')


def script(server: FaultServer, *replies: Reply) -> list:  # type: ignore[type-arg]
    """Queue `replies` for the chat requests; anything else (the tokenizer) is a 404.
    Returns the list the chat requests are recorded in."""
    pending, chats = list(replies), []

    def route(request):  # type: ignore[no-untyped-def]
        if not request.path.endswith("/chat/completions"):
            return Reply(status=404, body=b'{"error": "no tokenizer here"}')
        chats.append(request)
        return pending.pop(0)

    server.queue(*[route] * (len(replies) + 10))
    return chats


def system_text(request) -> str:  # type: ignore[no-untyped-def]
    return "\n".join(m["content"] for m in request.json()["messages"] if m["role"] == "system")


async def test_the_request_retried_without_tools_carries_the_inline_instructions(fault_server: FaultServer, tmp_path: Path) -> None:
    # The probe finds a model that calls tools; then the server refuses them mid-chat.
    chats = script(fault_server, tool_call_reply("probe"), refusal(), stream_reply("Noted.<save_memory>His cat is Mochi.</save_memory>"))
    settings = Settings(base_url=fault_server.base_url, model="m", tools="auto", max_retries=0)
    backend = OpenAICompatBackend(settings.backend)
    store = await Store.open(tmp_path / "o.db")
    session = await ChatSession.open(store, MIKA, settings, backend)
    events = [e async for e in session.send("My cat is called Mochi.")]
    await store.close()
    await backend.aclose()
    refused, retried = chats[1], chats[2]
    assert "tools" in refused.json() and NATIVE_INSTRUCTIONS in system_text(refused)
    assert "tools" not in retried.json()
    assert INLINE_INSTRUCTIONS in system_text(retried) and "save_memory tool" not in system_text(retried)
    assert [e.entry.content for e in events if isinstance(e, DiarySaved)] == ["His cat is Mochi."]
    assert session.turns.tools_mode == "inline"


async def test_a_model_that_answers_in_text_gets_the_inline_form_and_is_asked_once(fault_server: FaultServer, tmp_path: Path) -> None:
    chats = script(fault_server, stream_reply("I'm ready to help."), stream_reply("Hello."), stream_reply("Again."))
    settings = Settings(base_url=fault_server.base_url, model="m", tools="auto")
    for _ in range(2):  # two runs of `omoide say`: two processes, one question
        backend = OpenAICompatBackend(settings.backend)
        store = await Store.open(tmp_path / "o.db")
        session = await ChatSession.open(store, MIKA, settings, backend)
        _ = [e async for e in session.send("Hi.")]
        await store.close()
        await backend.aclose()
        assert session.turns.tool_form is not None and session.turns.tool_form.form == "inline"
        assert "answered in text instead of calling save_memory" in session.turns.tool_form.reason
    probe, first, second = chats
    assert probe.json()["tools"][0]["function"]["name"] == "save_memory"
    for turn in (first, second):
        assert "tools" not in turn.json() and INLINE_INSTRUCTIONS in system_text(turn)
    assert "inline" in locations.tool_forms_file().read_text()


async def test_a_model_that_calls_the_tool_keeps_the_native_form(fault_server: FaultServer) -> None:
    fault_server.queue(tool_call_reply("Mochi"))
    settings = Settings(base_url=fault_server.base_url, model="m", tools="auto")
    backend = OpenAICompatBackend(settings.backend)
    found = await resolve(settings, backend)
    again = await resolve(settings, backend)
    await backend.aclose()
    assert found.form == "native" and "called save_memory" in found.reason and again == found
    assert len(fault_server.requests) == 1


async def test_the_setting_decides_without_asking(fault_server: FaultServer) -> None:
    for form in ("native", "inline"):
        settings = Settings(base_url=fault_server.base_url, model="m", tools=form)
        backend = OpenAICompatBackend(settings.backend)
        found = await resolve(settings, backend)
        await backend.aclose()
        assert found.form == form and "set in the config" in found.reason
    assert fault_server.requests == []


@pytest.mark.model
async def test_doctor_says_the_real_llama_cpp_server_gets_the_inline_form(llama_server: str) -> None:
    import asyncio

    env = {**os.environ, "OMOIDE_BASE_URL": llama_server, "OMOIDE_MODEL": "smollm2"}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "omoide.cli.app", "doctor", env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )
    out, _ = await asyncio.wait_for(proc.communicate(), 300)
    text = out.decode()
    assert "diary tool: the inline <save_memory> form" in text, text
    assert "answered in text instead of calling save_memory" in text
    assert SAVE_MEMORY.name in locations.tool_forms_file().read_text()
