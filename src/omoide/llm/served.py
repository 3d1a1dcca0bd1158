"""The server the settings name, listed as discovery lists the ones found here.

`omoide doctor` asks the server in `base_url` (OMOIDE_BASE_URL) with its key;
`omoide models` and `/models` list its models the same way, beside the servers
found on this machine, so a server set only in the environment is never missing
from them (nor listed twice when it is also found here)."""

from __future__ import annotations

from dataclasses import dataclass

from omoide.config.settings import Settings
from omoide.errors import OmoideError
from omoide.models.discovery import FoundServer


@dataclass(frozen=True, slots=True)
class Configured:
    """What the configured server answered: its models, or why it did not."""

    server: FoundServer | None
    problem: OmoideError | None = None


CONFIGURED_NAME = "the server in base_url"


async def configured_server(settings: Settings) -> Configured | None:
    """The OpenAI-compatible server `base_url` names and the models it lists;
    None when the settings name none (the embedded model, or Anthropic)."""
    base_url = settings.backend.base_url
    if settings.backend.resolved != "openai" or not base_url:
        return None
    from omoide.llm.openai_compat import OpenAICompatBackend

    try:
        backend = OpenAICompatBackend(settings.backend)
    except OmoideError as exc:
        return Configured(None, exc)
    try:
        models = await backend.list_models()
    except OmoideError as exc:
        return Configured(None, exc)
    finally:
        await backend.aclose()
    return Configured(FoundServer(name=CONFIGURED_NAME, base_url=base_url, models=tuple(models)))


def _root(base_url: str) -> str:
    return base_url.rstrip("/").removesuffix("/v1")


def with_configured(found: list[FoundServer], configured: Configured | None) -> list[FoundServer]:
    """The configured server first (under the name discovery gave it, when it was
    also found here), then the others found."""
    if configured is None or configured.server is None:
        return found
    server = configured.server
    same = next((f for f in found if _root(f.base_url) == _root(server.base_url)), None)
    if same is not None:
        server = FoundServer(name=same.name, base_url=server.base_url, models=server.models or same.models)
    return [server, *(f for f in found if f is not same)]


async def list_servers(settings: Settings) -> tuple[list[FoundServer], Configured | None]:
    """The configured server and those found on this machine, asked at once."""
    import asyncio

    from omoide.models.choose import find_servers

    found, configured = await asyncio.gather(find_servers(settings), configured_server(settings))
    return with_configured(found, configured), configured
