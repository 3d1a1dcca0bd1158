"""Embeddings from an OpenAI-compatible server's `/v1/embeddings`, for ranking
memories by meaning. A server that has no such endpoint (or answers it badly)
is asked once a session: it then goes without, logged once."""

from __future__ import annotations

import logging
import math
from collections.abc import Awaitable, Callable, Sequence

import httpx

from omoide.bounded_http import BoundExceeded, fetch

EMBED_DEADLINE = 10.0
"""Seconds one embeddings request may take."""
EMBED_MAX_BYTES = 8 * 1024 * 1024
"""The largest embeddings answer read (a few dozen vectors of a few thousand floats)."""

Embed = Callable[[Sequence[str]], Awaitable[list[list[float]] | None]]
"""Texts -> one vector each, or None when no vectors can be had."""

log = logging.getLogger(__name__)


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0


def vectors_of(answer: object, count: int) -> list[list[float]] | None:
    """The vectors of an embeddings answer, in input order; None unless there is
    one finite, non-empty vector of the same size for each of `count` inputs."""
    if not isinstance(answer, dict) or not isinstance(answer.get("data"), list):
        return None
    items = answer["data"]
    try:
        ordered = sorted(items, key=lambda item: int(item.get("index", 0)))
        vectors = [[float(x) for x in item["embedding"]] for item in ordered]
    except (AttributeError, KeyError, TypeError, ValueError):
        return None
    if len(vectors) != count or not vectors or not vectors[0]:
        return None
    if any(len(v) != len(vectors[0]) or not all(math.isfinite(x) for x in v) for v in vectors):
        return None
    return vectors


class ServerEmbeddings:
    def __init__(self, client: httpx.AsyncClient, base_url: str, model: str, headers: Callable[[], dict[str, str]]) -> None:
        self.client = client
        self.url = f"{base_url}/embeddings"
        self.model = model
        self.headers = headers
        self.available: bool | None = None
        """None until asked; False once the server showed it has none to give."""

    async def embed(self, texts: Sequence[str]) -> list[list[float]] | None:
        if self.available is False or not texts:
            return None
        try:
            response = await fetch(self.client, "POST", self.url, json={"model": self.model, "input": list(texts)},
                                   headers=self.headers(), deadline=EMBED_DEADLINE, max_bytes=EMBED_MAX_BYTES)
            answer = response.json() if response.status_code == 200 else None
        except (httpx.HTTPError, BoundExceeded, ValueError) as exc:
            self._without(f"{type(exc).__name__}: {exc}")
            return None
        vectors = vectors_of(answer, len(texts))
        if vectors is None:
            self._without(f"HTTP {response.status_code}, no usable vectors")
            return None
        self.available = True
        return vectors

    def _without(self, why: str) -> None:
        log.warning("embeddings from %s: %s; memories are ranked without meaning this session", self.url, why)
        self.available = False
