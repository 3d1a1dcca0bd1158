"""What a model server says, found on a local port or configured, is data:
model names reach `omoide models` and `omoide doctor` inert and bounded, a
token count or a reply that never ends is cut off on our side, and a key the
server echoes masked shows no more than its last four characters. Each test
runs omoide in a subprocess against a fake server on a loopback port."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

from tests.faultserver import Reply, Request, stream_reply, text_chunk
from tests.fakeservers import address, http_server, ollama, openai_models
from tests.integration.test_hostile_text import assert_inert

OSC = "\x1b]52;c;cHduZWQ=\x07\x1b]0;pwned\x07\x1b[2J\x9b31m\x9d0;title\x9c"
EVIL_MODEL = f"evil{OSC}[/][link=http://evil.example]model"


def omoide(*args: str, env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "omoide.cli.app", *args], capture_output=True, timeout=timeout,
                          env={**os.environ, "COLUMNS": "200", **(env or {})})


def discovering(*servers: str) -> dict[str, str]:
    return {"OMOIDE_DISCOVER_SERVERS": json.dumps(list(servers))}


def test_models_and_doctor_show_a_discovered_servers_model_names_inert() -> None:
    with http_server(ollama(EVIL_MODEL, "llama3.1:8b")) as olla, \
            http_server(openai_models(f"kobold{OSC}[/]", owned_by="koboldcpp")) as kobold:
        env = discovering(address(olla), address(kobold))
        listed = omoide("models", env=env)
        doctor = omoide("doctor", env={**env, "OMOIDE_BASE_URL": address(olla) + "/v1", "OMOIDE_MODEL": "llama3.1:8b"})
        chosen = omoide("models", "use", EVIL_MODEL, env=env)
    assert listed.returncode == 0, listed.stderr.decode()
    for result in (listed, doctor, chosen):
        text = assert_inert(result)
        assert "\x9d" not in text and "\x9c" not in text
        assert "evil␛]52;c;" in text and "[/]" in text
    assert "[/][link=http://evil.example]model" in " ".join(listed.stdout.decode().split())
    assert "kobold␛]52;c;" in listed.stdout.decode()
    assert chosen.returncode == 0 and "The default model is now evil␛]52;c;" in chosen.stdout.decode()


def test_a_configured_servers_model_list_is_inert_and_bounded_in_doctor() -> None:
    names = [EVIL_MODEL, *(f"m-{i:05d}-{'x' * 200}" for i in range(3000))]
    with http_server(openai_models(*names)) as server:
        result = omoide("doctor", env={"OMOIDE_BASE_URL": address(server) + "/v1", "OMOIDE_MODEL": "not-there"})
    text = assert_inert(result)
    assert "does not list the model 'not-there'" in text and "It has 3,001:" in " ".join(text.split())
    assert "evil␛]52;c;" in text
    assert len(result.stdout) < 8_000, len(result.stdout)


def test_ten_thousand_model_names_on_two_servers_are_counted_not_printed() -> None:
    names = [f"model-{i:05d}:7b" for i in range(10_000)]
    with http_server(ollama(*names)) as olla, http_server(openai_models(*names)) as other:
        env = discovering(address(olla), address(other))
        listed = omoide("models", env=env)
        doctor = omoide("doctor", env=env)
        chosen = omoide("models", "use", "model-09999:7b", "--server", address(other), env=env)
        again = omoide("models", env=env).stdout.decode()
    out = listed.stdout.decode()
    assert listed.returncode == 0, listed.stderr.decode()
    assert len(listed.stdout) < 30_000, len(listed.stdout)  # 2.7 MB before
    assert out.count("lists 10,000 models") == 2 and out.count("9,980 more") == 2  # 20 shown of each
    assert "model-00000:7b" in out and "model-09999:7b" not in out
    line = next(line for line in doctor.stdout.decode().splitlines() if f"Ollama at {address(olla)}" in line)
    assert "10,000 models: model-00000:7b" in line and "and 9,990 more" in line and len(line) < 1_000
    # every name can still be chosen, and then it is listed (and marked) though past the cap
    assert chosen.returncode == 0, chosen.stderr.decode()
    row = next(line for line in again.splitlines() if "model-09999:7b" in line)
    assert "●" in row and address(other) in row


SAY_ENV = {"OMOIDE_MODEL": "m", "OMOIDE_TOOLS": "inline", "OMOIDE_SUMMARY_THRESHOLD": "1000"}


def drip() -> Reply:
    """A body that never ends, a few bytes at a time: no read ever times out."""
    return Reply(chunks=itertools.chain.from_iterable(itertools.repeat([b" ", 0.2])))  # type: ignore[arg-type]


async def say(fault_server, *, timeout: float = 90, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:  # type: ignore[no-untyped-def]
    env = {"OMOIDE_BASE_URL": fault_server.base_url, **SAY_ENV, **(env or {})}
    return await asyncio.wait_for(asyncio.to_thread(omoide, "say", "suzune", "hi", env=env, timeout=timeout + 30), timeout)


async def test_a_token_count_that_never_finishes_is_given_up_and_say_answers(fault_server) -> None:  # type: ignore[no-untyped-def]
    def reply(request: Request) -> Reply:
        if request.path.endswith("/apply-template"):
            return drip()
        if request.path.endswith("/chat/completions"):
            return stream_reply("The sea is calm.")
        return Reply(status=404, body=b"{}")

    fault_server.queue(*[reply] * 8)
    result = await say(fault_server)
    assert result.returncode == 0, result.stderr.decode()
    assert result.stdout.decode().strip() == "The sea is calm."


async def test_a_token_count_answer_without_end_is_cut_at_its_size_cap(omoide_home: Path, fault_server) -> None:  # type: ignore[no-untyped-def]
    def reply(request: Request) -> Reply:
        if request.path.endswith(("/apply-template", "/tokenize")):
            return Reply(chunks=itertools.repeat(b'"tokens" ' * 8192))  # type: ignore[arg-type]
        if request.path.endswith("/chat/completions"):
            return stream_reply("The sea is calm.")
        return Reply(status=404, body=b"{}")

    fault_server.queue(*[reply] * 8)
    result = await say(fault_server)
    assert result.returncode == 0, result.stderr.decode()
    assert result.stdout.decode().strip() == "The sea is calm."
    assert "sent more than 16,777,216 bytes; counting by estimate" in (omoide_home / "logs" / "omoide.log").read_text()


async def test_an_endless_chat_reply_is_cut_past_max_tokens_and_kept(omoide_home: Path, fault_server) -> None:  # type: ignore[no-untyped-def]
    chunk = f"data: {json.dumps(text_chunk('wave '))}\n\n".encode()

    def reply(request: Request) -> Reply:
        if request.path.endswith("/chat/completions"):
            return Reply(chunks=itertools.chain.from_iterable(itertools.repeat([chunk, 0.001])))  # type: ignore[arg-type]
        return Reply(status=404, body=b"{}")

    fault_server.queue(*[reply] * 8)
    result = await say(fault_server, env={"OMOIDE_MAX_TOKENS": "50"})
    assert result.returncode == 1
    err = " ".join(result.stderr.decode().split())
    assert "kept writing past max_tokens (50 tokens)" in err and "What arrived is kept" in err
    status, content = sqlite3.connect(omoide_home / "data" / "omoide.db").execute(
        "SELECT status, content FROM messages WHERE role = 'assistant' ORDER BY id DESC LIMIT 1").fetchone()
    assert status == "interrupted" and content.startswith("wave wave")
    assert len(content) <= 50 * 8  # a generous 8 characters a token


KEY = "sk-ENVq7Zp2Lx9Wm4Rt8Yv3Nbcdef"


async def test_a_masked_echo_of_the_key_shows_at_most_its_last_four_characters(omoide_home: Path, fault_server) -> None:  # type: ignore[no-untyped-def]
    masked = f"{KEY[:6]}****{KEY[-4:]}"
    body = json.dumps({"error": {"message": f"Incorrect API key provided: {masked}. You can find your API key at "
                                            f"https://platform.openai.com/account/api-keys.", "code": "invalid_api_key"}})
    fault_server.queue(*[Reply(status=401, body=body.encode())] * 6)
    result = await say(fault_server, env={"OMOIDE_API_KEY": KEY})
    assert result.returncode == 1
    err = " ".join(result.stderr.decode().split())
    assert "refused the API key" in err and "Incorrect API key provided: ****cdef." in err
    log = (omoide_home / "logs" / "omoide.log").read_text() if (omoide_home / "logs" / "omoide.log").exists() else ""
    for shown in (err, result.stdout.decode(), log):
        assert not any(KEY[i : i + 5].lower() in shown.lower() for i in range(len(KEY) - 4)), shown
