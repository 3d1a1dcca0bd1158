"""One streamed HTTP reply, the part every HTTP backend shares.

A request is retried (with backoff, or after the Retry-After the server asked
for) only until the first byte of the reply's body arrives; after that a
failure ends the reply, keeping what arrived. `request_timeout` times the wait
for that first byte and `stall_timeout` every gap after it.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from dataclasses import dataclass
from typing import TypeVar

import httpx

from omoide.bounded_http import read_capped
from omoide.config.sections import BackendSettings
from omoide.errors import BackendError, BackendUnreachable, StreamBroken, StreamStalled
from omoide.llm.errors import connect_error, http_error

T = TypeVar("T")

MAX_BACKOFF = 8.0
MAX_RETRY_AFTER = 20.0
"""Longest Retry-After honoured by waiting; a longer one is reported instead."""
ERROR_BODY_MAX_BYTES = 64 * 1024
"""How much of an error response's body is read for its message."""

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Failed:
    error: BackendError
    wait: float | None = None
    """Seconds the server asked for (Retry-After), if any."""


Refusal = Callable[[httpx.Response, bytes], "Failed | None"]
"""What an HTTP error status means: a Failed, or None to build the request
again and send it at once (the backend changed something, e.g. dropped tools)."""


def default_client(settings: BackendSettings) -> httpx.AsyncClient:
    # The stream times its own reads; httpx's read limit is only a backstop.
    return httpx.AsyncClient(timeout=httpx.Timeout(
        settings.request_timeout,
        connect=min(settings.request_timeout, 10.0),
        read=max(settings.request_timeout, settings.stall_timeout) + 1.0,
    ))


class Reply:
    """An open streamed response whose first body bytes have arrived."""

    def __init__(self, transport: Transport, response: httpx.Response, chunks: AsyncIterator[bytes], first: bytes) -> None:
        self._transport = transport
        self.response = response
        self._chunks = chunks
        self._first: bytes | None = first

    async def chunks(self) -> AsyncIterator[bytes]:
        """The body, piece by piece; StreamStalled or StreamBroken if it stops."""
        if self._first is not None:
            first, self._first = self._first, None
            yield first
        while (chunk := await self._transport.next_chunk(self._chunks, self._transport.settings.stall_timeout)) is not None:
            yield chunk

    async def aclose(self) -> None:
        await self.response.aclose()


class Transport:
    def __init__(self, settings: BackendSettings, base_url: str, client: httpx.AsyncClient | None = None) -> None:
        self.settings = settings
        self.base_url = base_url
        self._own_client = client is None
        self.client = client or default_client(settings)

    async def open(self, build: Callable[[], httpx.Request], refused: Refusal) -> Reply:
        """Send until the reply's first byte arrives, or raise the BackendError."""
        retries = 0
        while True:
            outcome = await self._attempt(build(), refused)
            if isinstance(outcome, Reply):
                return outcome
            if outcome is None:
                continue
            error = outcome.error
            # A refused connection rarely heals within a second, and the user is waiting.
            limit = min(1, self.settings.max_retries) if isinstance(error, BackendUnreachable) else self.settings.max_retries
            if retries >= limit or not error.retryable:
                raise error
            retries += 1
            wait = outcome.wait if outcome.wait is not None else backoff(retries)
            log.warning("%s Retry %d of %d in %.1f s.", error.message, retries, limit, wait)
            await asyncio.sleep(wait)

    async def stream(
        self,
        build: Callable[[], httpx.Request],
        refused: Refusal,
        parse: Callable[[AsyncIterator[bytes]], AsyncIterator[T]],
    ) -> AsyncGenerator[T, None]:
        """Open the reply and yield what `parse` makes of its body; the response
        is closed however the stream ends (finished, failed or cancelled)."""
        reply = await self.open(build, refused)
        try:
            async for item in parse(reply.chunks()):
                yield item
        finally:
            await reply.aclose()

    async def _attempt(self, request: httpx.Request, refused: Refusal) -> Reply | Failed | None:
        try:
            response = await self.client.send(request, stream=True)
        except httpx.ConnectTimeout as exc:
            return Failed(connect_error(exc, self.base_url))
        except httpx.TimeoutException as exc:
            raise self._no_first_byte(self.settings.request_timeout) from exc
        except httpx.HTTPError as exc:
            return Failed(connect_error(exc, self.base_url))
        try:
            if response.status_code >= 400:
                body = await self._error_body(response)
                await response.aclose()
                return refused(response, body)
            chunks = response.aiter_bytes()
            first = await self.next_chunk(chunks, self.settings.request_timeout, first=True)
        except StreamBroken as exc:
            # Dropped before a single byte of the reply: nothing is lost by asking again.
            await response.aclose()
            return Failed(exc)
        except BaseException:
            await response.aclose()
            raise
        if first is None:
            await response.aclose()
            return Failed(StreamBroken(f"The server at {self.base_url} sent an empty reply.", "Send again."))
        return Reply(self, response, chunks, first)

    async def _error_body(self, response: httpx.Response) -> bytes:
        """The start of an error's body: what a server says about a failure is a
        line or two, so an endless or dripping body is cut, not waited on."""
        try:
            async with asyncio.timeout(self.settings.stall_timeout):
                body, _more = await read_capped(response, ERROR_BODY_MAX_BYTES)
        except (TimeoutError, httpx.HTTPError):
            return b""
        return body

    def refused(self, response: httpx.Response, body: bytes, *, model: str, secret: str | None) -> Failed:
        """The usual meaning of an error status, with the wait the server asked for."""
        error = http_error(response.status_code, body, url=self.base_url, model=model, secret=secret)
        wait = retry_after(response.headers.get("retry-after"))
        if error.retryable and wait is not None and wait > MAX_RETRY_AFTER:
            # Longer than anyone would watch a spinner: say so rather than wait.
            error = type(error)(error.message, f"The server asks to wait {wait:.0f} s; send again after that.")
            error.retryable = False
        return Failed(error, wait)

    def _no_first_byte(self, waited: float) -> StreamStalled:
        # Not retried: a busy server made busier, and the user's wait doubled.
        error = StreamStalled(
            f"The server at {self.base_url} sent nothing for {waited:.0f} s.",
            "It may be loading the model or busy with a long prompt; send again, or raise request_timeout.",
        )
        error.retryable = False
        return error

    async def next_chunk(self, chunks: AsyncIterator[bytes], timeout: float, *, first: bool = False) -> bytes | None:
        """The next non-empty piece of the body, or None at its end."""
        while True:
            try:
                async with asyncio.timeout(timeout):
                    chunk = await anext(chunks)
            except StopAsyncIteration:
                return None
            except (TimeoutError, httpx.ReadTimeout) as exc:
                if first:
                    raise self._no_first_byte(timeout) from exc
                raise StreamStalled(
                    f"The reply stalled: nothing arrived for {timeout:.0f} s.",
                    "What arrived is kept. Send again, or raise stall_timeout for a slow server.",
                ) from exc
            except httpx.HTTPError as exc:
                raise StreamBroken(
                    f"The connection to {self.base_url} broke mid-reply ({type(exc).__name__}).",
                    "What arrived is kept. Send again.",
                ) from exc
            if chunk:
                return chunk

    def ended_early(self) -> StreamBroken:
        return StreamBroken(
            f"The connection to {self.base_url} closed before the reply finished.",
            "What arrived is kept. Send again.",
        )

    async def aclose(self) -> None:
        if self._own_client:
            await self.client.aclose()


def backoff(retry: int) -> float:
    """Exponential, with jitter so clients that failed together do not return together."""
    return min(MAX_BACKOFF, 0.25 * 2.0**retry) * (0.5 + random.random() / 2)


def retry_after(value: str | None) -> float | None:
    try:
        seconds = float(value) if value is not None else None
    except ValueError:
        return None  # an HTTP date: rare from API servers, and backoff does as well
    return max(0.0, seconds) if seconds is not None else None
