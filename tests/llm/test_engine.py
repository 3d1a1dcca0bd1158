"""The embedded engine (llama.cpp's server in this process): its listener is
omoide's alone, the GGUF header reader, a downloaded model's own template, and
a slot per speaker."""

from __future__ import annotations

import shutil
import stat
import struct
from pathlib import Path

import httpx
import pytest

from omoide.config.settings import Settings
from omoide.errors import LocalModelMissing
from omoide.llm.base import TextDelta, Usage
from omoide.llm.gguf import read_model_info

pytestmark = pytest.mark.model
HELLO = [{"role": "user", "content": "Say hello."}]


@pytest.fixture(scope="module")
def backend(smollm2_path: Path):  # type: ignore[no-untyped-def]
    from omoide.llm.local import LocalBackend

    return LocalBackend(Settings(max_tokens=8, temperature=0.0, context_size=2048))


def test_the_listener_is_a_private_socket_that_refuses_a_caller_without_the_key(backend) -> None:  # type: ignore[no-untyped-def]
    engine = backend.engine()
    assert engine.url.startswith("unix://") and engine.socket.is_socket()
    assert stat.S_IMODE(engine.socket.stat().st_mode) == 0o600
    assert stat.S_IMODE(engine.folder.stat().st_mode) == 0o700
    with httpx.Client(transport=httpx.HTTPTransport(uds=str(engine.socket)), base_url="http://engine") as stranger:
        for route, body in (("/tokenize", {"content": "hi"}), ("/v1/chat/completions", {"messages": HELLO, "max_tokens": 1})):
            assert stranger.post(route, json=body).status_code == 401
            assert stranger.post(route, json=body, headers={"Authorization": "Bearer guessed"}).status_code == 401
        assert stranger.get("/slots").status_code == 401
    assert engine.tokenize("hi")  # the key opens it


def test_the_gguf_header_gives_architecture_context_template_and_bos(smollm2_path: Path) -> None:
    info = read_model_info(smollm2_path)
    assert (info.architecture, info.context_length, info.add_bos) == ("llama", 8192, False)
    assert "<|im_start|>" in info.chat_template


@pytest.mark.parametrize("damage", ["magic", "truncated", "huge string"])
def test_a_damaged_gguf_is_refused_with_a_message(tmp_path: Path, smollm2_path: Path, damage: str) -> None:
    head = smollm2_path.read_bytes()[:4096]
    if damage == "magic":
        data = b"PK\x03\x04" + head[4:]
    elif damage == "truncated":
        data = head[:40]
    else:  # the first key's length claims more than any header holds
        data = head[:24] + struct.pack("<Q", 1 << 40) + head[32:]
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(data)
    with pytest.raises(LocalModelMissing) as info:
        read_model_info(bad)
    assert str(bad) in info.value.message and "GGUF" in info.value.message


async def test_a_pulled_model_runs_on_the_engine_with_its_own_chat_template(smollm2_path: Path, omoide_home: Path) -> None:
    """A GGUF in the models folder (as `omoide models pull` leaves it) is not one
    of the embedded models: its prompt is its own chat template, applied by the
    engine, and its context comes from its header."""
    from omoide.llm.local import LocalBackend
    from omoide.models.catalog import models_dir

    models_dir().mkdir(parents=True, exist_ok=True)
    shutil.copy(smollm2_path, models_dir() / "pulled-smol.gguf")
    pulled = LocalBackend(Settings(local_model="pulled-smol.gguf", max_tokens=8, temperature=0.0, context_size=32768))
    chat = [{"role": "system", "content": "## Scenario\nA café.", "speakers": ["Kai", "Suzune"]}, {"role": "user", "content": "Hi"}]
    rendered = pulled.render_prompt(chat)  # type: ignore[arg-type]
    assert not pulled.embedded and pulled.n_ctx == 8192
    assert rendered == "<|im_start|>system\n## Scenario\nA café.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
    events = [e async for e in pulled.stream(chat)]  # type: ignore[arg-type]
    assert "".join(e.text for e in events if isinstance(e, TextDelta)).strip()
    assert [e for e in events if isinstance(e, Usage)][-1].prompt_tokens == len(pulled.tokenize(rendered))


async def test_each_speaker_keeps_a_slot_and_finds_its_prompt_cached(backend) -> None:  # type: ignore[no-untyped-def]
    """Two speakers taking turns: each one's second prompt finds its first in its
    own slot (the engine's own cached count), where one shared slot would have
    been overwritten by the other speaker."""
    cards = {key: [{"role": "system", "content": f"You are {key}. " + f"{key} tends a lighthouse and keeps a log. " * 12},
                   {"role": "user", "content": "Good evening."}] for key in ("wren", "suzune")}

    async def cached(key: str) -> int:
        usage = [e async for e in backend.stream(cards[key], max_tokens=2, cache_key=key) if isinstance(e, Usage)][-1]
        return usage.cache_read_tokens or 0

    for key in cards:
        await cached(key)
    prompt_tokens = (await backend.count_tokens(cards["wren"])).tokens
    assert await cached("wren") >= prompt_tokens - 1
    assert await cached("suzune") >= prompt_tokens - 1
