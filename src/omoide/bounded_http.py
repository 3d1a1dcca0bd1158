"""Whole HTTP responses read within a deadline and a size cap.

httpx's timeouts are per phase: a server that sends a byte every few seconds,
or an endless body, is never timed out by them, and `response.json()` keeps
every byte in memory. Every small request omoide makes (model lists, token
counts, an error's body) goes through here instead, so a server that talks
too long or too much is given up on, not waited on.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

import httpx


class BoundExceeded(Exception):
    """The response took longer than its deadline, or was larger than its cap."""


@dataclass(frozen=True, slots=True)
class SmallResponse:
    status_code: int
    headers: httpx.Headers
    content: bytes

    def json(self) -> Any:
        """The body as JSON; ValueError when it is not."""
        return json.loads(self.content)


async def read_capped(response: httpx.Response, max_bytes: int) -> tuple[bytes, bool]:
    """At most `max_bytes` of an open streamed response's body, and whether
    there was more (then the rest is left unread)."""
    body = bytearray()
    async for chunk in response.aiter_bytes():
        body += chunk
        if len(body) > max_bytes:
            return bytes(body[:max_bytes]), True
    return bytes(body), False


async def fetch(client: httpx.AsyncClient, method: str, url: str, *, deadline: float, max_bytes: int,
                **kwargs: Any) -> SmallResponse:
    """The whole response to one request, or BoundExceeded when it takes longer
    than `deadline` seconds in all or its body is over `max_bytes`.
    httpx.HTTPError as usual when the server cannot be reached."""
    try:
        async with asyncio.timeout(deadline):
            async with client.stream(method, url, **kwargs) as response:
                declared = response.headers.get("content-length", "")
                if declared.isdigit() and int(declared) > max_bytes:
                    raise BoundExceeded(f"{url} answered with {int(declared):,} bytes, over the {max_bytes:,} byte limit")
                body, more = await read_capped(response, max_bytes)
                if more:
                    raise BoundExceeded(f"{url} sent more than {max_bytes:,} bytes")
                return SmallResponse(response.status_code, response.headers, body)
    except TimeoutError:
        raise BoundExceeded(f"{url} did not finish answering within {deadline:g} s") from None
