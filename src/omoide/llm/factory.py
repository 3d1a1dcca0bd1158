"""Choosing the backend the settings ask for."""

from __future__ import annotations

from omoide.config.settings import Settings
from omoide.errors import ConfigError
from omoide.llm.base import Backend


def make_backend(settings: Settings) -> Backend:
    kind = settings.resolved_backend
    if kind == "local":
        from omoide.llm.local import LocalBackend

        return LocalBackend(settings)
    if kind == "openai":
        from omoide.llm.openai_compat import OpenAICompatBackend

        return OpenAICompatBackend(settings)
    if kind == "anthropic":
        from omoide.llm.anthropic import AnthropicBackend

        return AnthropicBackend(settings)
    raise ConfigError(f"Unknown backend '{kind}'.", "Use local, openai or anthropic.")
