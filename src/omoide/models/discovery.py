"""Finding the model servers a roleplayer is likely to run on this machine.

Every address is probed at once, with a short timeout: on this machine a port
with nothing behind it refuses at once, so a probe of the usual ports costs a
few milliseconds, and a server that accepts but hangs costs at most `timeout`.
The TUI runs it in the background after the first paint, so start-up never
waits for it; `omoide doctor` and `omoide models` wait the timeout at most.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import httpx

from omoide.bounded_http import BoundExceeded, fetch
log = logging.getLogger(__name__)

DEFAULT_TIMEOUT = 0.5
"""Seconds a probe may take; a local server answers its model list in milliseconds."""
MAX_LIST_BYTES = 8 * 1024 * 1024
"""Largest model list read from a server (about 100,000 names); a longer or
endless answer is not a model server's."""

WELL_KNOWN: dict[int, str] = {
    11434: "Ollama",
    8080: "llama.cpp server",
    1234: "LM Studio",
    5001: "KoboldCpp",
    8000: "vLLM",
    30000: "SGLang",
    5000: "text-generation-webui",
}
"""Default ports of the servers people run, and what usually listens there."""

_OWNERS = {"llamacpp": "llama.cpp server", "koboldcpp": "KoboldCpp", "vllm": "vLLM", "sglang": "SGLang", "library": "Ollama"}
"""`owned_by` values in /v1/models that name the server, whatever its port."""


@dataclass(frozen=True, slots=True)
class FoundServer:
    name: str
    """What it is: 'Ollama', 'KoboldCpp', or 'OpenAI-compatible server' when it does not say."""
    base_url: str
    """The OpenAI-compatible base URL to put in the config, ending in /v1."""
    models: tuple[str, ...] = field(default_factory=tuple)


def default_addresses(host: str = "127.0.0.1") -> list[str]:
    return [f"http://{host}:{port}" for port in WELL_KNOWN]


def _root(address: str) -> str:
    address = address.rstrip("/")
    return address[: -len("/v1")] if address.endswith("/v1") else address


async def _get_json(client: httpx.AsyncClient, url: str, timeout: float) -> Any:
    try:
        response = await fetch(client, "GET", url, deadline=timeout, max_bytes=MAX_LIST_BYTES)
    except (httpx.HTTPError, OSError):
        return None  # nothing there: the usual case, not worth a log line
    except BoundExceeded as exc:
        log.info("discovery: %s", exc)
        return None
    if response.status_code != 200:
        return None
    try:
        return response.json()
    except ValueError:
        return None


def _openai_models(body: Any) -> tuple[list[str], str | None]:
    if not isinstance(body, dict) or not isinstance(body.get("data"), list):
        return [], None
    items = [m for m in body["data"] if isinstance(m, dict) and isinstance(m.get("id"), str)]
    owner = next((str(m.get("owned_by", "")).lower() for m in items if m.get("owned_by")), None)
    return [m["id"] for m in items], owner


def _ollama_models(body: Any) -> list[str] | None:
    if not isinstance(body, dict) or not isinstance(body.get("models"), list):
        return None
    return [m["name"] for m in body["models"] if isinstance(m, dict) and isinstance(m.get("name"), str)]


async def probe(client: httpx.AsyncClient, address: str, timeout: float = DEFAULT_TIMEOUT) -> FoundServer | None:
    """What answers at `address` (scheme, host and port; a trailing /v1 is allowed)."""
    root = _root(address)
    openai_body, ollama_body = await asyncio.gather(
        _get_json(client, f"{root}/v1/models", timeout), _get_json(client, f"{root}/api/tags", timeout)
    )
    models, owner = _openai_models(openai_body)
    ollama = _ollama_models(ollama_body)
    speaks_openai = isinstance(openai_body, dict) and isinstance(openai_body.get("data"), list)
    if not speaks_openai and ollama is None:
        return None
    port = urlsplit(root).port
    if ollama is not None:
        name, models = "Ollama", ollama or models
    else:
        name = _OWNERS.get(owner or "") or WELL_KNOWN.get(port or 0) or "OpenAI-compatible server"
    return FoundServer(name=name, base_url=f"{root}/v1", models=tuple(models))


async def _bounded(client: httpx.AsyncClient, address: str, timeout: float) -> FoundServer | None:
    # httpx's timeout is per phase; a server that drips bytes could outlast it.
    try:
        return await asyncio.wait_for(probe(client, address, timeout), timeout)
    except TimeoutError:
        log.info("discovery: %s did not answer within %.2f s", address, timeout)
        return None


async def discover(addresses: list[str] | None = None, *, timeout: float = DEFAULT_TIMEOUT) -> list[FoundServer]:
    """Every server that answers among `addresses` (default: the well-known
    local ports), in the order asked; never raises, never waits past `timeout`."""
    targets = default_addresses() if addresses is None else addresses
    if not targets:
        return []
    limits = httpx.Limits(max_connections=2 * len(targets))
    # trust_env=False: a proxy from the environment must not see (or swallow) local probes.
    # Loading the CA bundle takes longer than probing every port: only when an address needs TLS.
    secure = any(t.lower().startswith("https:") for t in targets)
    async with httpx.AsyncClient(timeout=timeout, trust_env=False, limits=limits, verify=secure) as client:
        results = await asyncio.gather(*(_bounded(client, a, timeout) for a in targets))
    found = [r for r in results if r is not None]
    log.info("discovery: %d server(s) answered: %s", len(found), ", ".join(f.base_url for f in found))
    return found
