"""The backend registry: each kind of backend by name, made from the sections
of the settings it reads. A backend module is imported only when its kind is
made (the embedded one loads llama.cpp, which the CLI must not pay for at start).

A new backend is one more entry here and a module in llm/ implementing the
`Backend` protocol of llm/base.py (see docs/architecture.md)."""

from __future__ import annotations

from collections.abc import Callable

from omoide.config.settings import Settings
from omoide.errors import ConfigError
from omoide.llm.base import Backend


def _local(settings: Settings) -> Backend:
    from omoide.llm.local import LocalBackend

    return LocalBackend(settings)


def _openai(settings: Settings) -> Backend:
    from omoide.llm.openai_compat import OpenAICompatBackend

    return OpenAICompatBackend(settings.backend)


def _anthropic(settings: Settings) -> Backend:
    from omoide.llm.anthropic import AnthropicBackend

    return AnthropicBackend(settings.backend)


BACKENDS: dict[str, tuple[str, Callable[[Settings], Backend]]] = {
    "local": ("the embedded model, in-process on the CPU ([embedded])", _local),
    "openai": ("any OpenAI-compatible server: Ollama, llama.cpp, vLLM, LM Studio, KoboldCpp, OpenRouter, OpenAI", _openai),
    "anthropic": ("Anthropic's Messages API", _anthropic),
}
"""Kind -> (what it is, how it is made from the settings)."""


def make_backend(settings: Settings) -> Backend:
    """The chat backend the settings' [backend] kind names ('auto' resolved)."""
    kind = settings.backend.resolved
    if kind not in BACKENDS:
        raise ConfigError(f"Unknown backend '{kind}'.", f"Use {', '.join(BACKENDS)} (or auto).")
    return BACKENDS[kind][1](settings)
