"""Choosing the backend the settings ask for."""

from __future__ import annotations

from omoide.config import Settings
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
        try:
            from omoide.llm.anthropic import AnthropicBackend
        except ImportError as exc:
            raise ConfigError("The anthropic backend is not available in this version.", "Use backend = \"openai\" or \"local\".") from exc
        return AnthropicBackend(settings)
    raise ConfigError(f"Unknown backend '{kind}'.", "Use local, openai or anthropic.")
