"""Any OpenAI-compatible /v1/chat/completions server, streamed over httpx.

Retries (with backoff) only before the first byte of a reply arrives; after
that a failure ends the reply, keeping what arrived. A stream silent for
longer than `stall_timeout` is given up as stalled.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx

from omoide.config import Settings
from omoide.errors import BackendError, BackendUnreachable, BadRequest, ConfigError, ModelNotFound, StreamBroken, StreamStalled
from omoide.llm.base import WIRE_KEYS, ChatMessage, Done, Event, TextDelta, TokenCount, ToolSpec, Usage, estimate_tokens
from omoide.llm.errors import connect_error, error_detail, http_error
from omoide.llm.sse import SSEParser
from omoide.llm.toolcalls import ToolCallAccumulator

MAX_BACKOFF = 8.0
MAX_RETRY_AFTER = 20.0
"""Longest Retry-After honoured by waiting; a longer one is reported instead."""
FRAMING_TOKENS = 4
"""Tokens a chat template adds around each message, roughly."""
TOKENIZERS = (
    ("tokenize", "content", "llama.cpp server tokenizer"),
    ("extras/tokenize", "input", "llama-cpp-python server tokenizer"),
)

log = logging.getLogger(__name__)


class OpenAICompatBackend:
    name = "openai"

    def __init__(self, settings: Settings, client: httpx.AsyncClient | None = None) -> None:
        if not settings.base_url:
            raise ConfigError("The openai backend needs a base_url.", "Set base_url in the config or OMOIDE_BASE_URL.")
        self.settings = settings
        self.base_url = settings.base_url
        self.model = settings.model or "default"
        self.supports_tools = settings.tools != "inline"
        self._own_client = client is None
        # Reads are timed by the stream itself (request_timeout to the first
        # byte, stall_timeout between chunks); httpx's read limit is a backstop.
        self.client = client or httpx.AsyncClient(timeout=httpx.Timeout(
            settings.request_timeout,
            connect=min(settings.request_timeout, 10.0),
            read=max(settings.request_timeout, settings.stall_timeout) + 1.0,
        ))
        self._tokenizers = list(TOKENIZERS)  # narrowed to the one that works, or none

    def _secret(self) -> str | None:
        return self.settings.api_key.get_secret_value() if self.settings.api_key else None

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "text/event-stream"}
        if (key := self._secret()) is not None:
            headers["Authorization"] = f"Bearer {key}"
        return headers

    def _payload(self, messages: list[ChatMessage], tools: list[ToolSpec] | None, tool_choice: Any, max_tokens: int | None) -> dict[str, Any]:
        payload: dict[str, Any] = {
            "model": self.model,
            "messages": [{k: v for k, v in m.items() if k in WIRE_KEYS} for m in messages],
            "stream": True,
            "stream_options": {"include_usage": True},
            "temperature": self.settings.temperature,
            "top_p": self.settings.top_p,
            "max_tokens": max_tokens or self.settings.max_tokens,
        }
        if tools and self.supports_tools:
            payload["tools"] = [t.openai() for t in tools]
            if tool_choice is not None:
                payload["tool_choice"] = tool_choice
        return payload

    async def stream(
        self,
        messages: list[ChatMessage],
        *,
        tools: list[ToolSpec] | None = None,
        tool_choice: str | dict[str, Any] | None = None,
        max_tokens: int | None = None,
    ) -> AsyncIterator[Event]:
        url = f"{self.base_url}/chat/completions"
        retries = 0
        while True:
            outcome = await self._attempt(url, self._payload(messages, tools, tool_choice, max_tokens))
            if isinstance(outcome, _Opened):
                break
            if outcome is None:  # the server refused the tools: send again without them
                continue
            error = outcome.error
            # A refused connection rarely heals within a second, and the user is waiting.
            limit = min(1, self.settings.max_retries) if isinstance(error, BackendUnreachable) else self.settings.max_retries
            if retries >= limit or not error.retryable:
                raise error
            retries += 1
            wait = outcome.wait if outcome.wait is not None else _backoff(retries)
            log.warning("%s Retry %d of %d in %.1f s.", error.message, retries, limit, wait)
            await asyncio.sleep(wait)
        try:
            async for event in self._events(outcome.chunks, outcome.first):
                yield event
        finally:
            await outcome.response.aclose()

    async def _attempt(self, url: str, payload: dict[str, Any]) -> _Opened | _Failed | None:
        """One request, up to the first byte of its body. Returns the open
        stream, or the failure (with any delay the server asked for), or None
        when the request should be sent again changed (tools dropped)."""
        try:
            request = self.client.build_request("POST", url, json=payload, headers=self._headers())
            response = await self.client.send(request, stream=True)
        except httpx.ConnectTimeout as exc:
            return _Failed(connect_error(exc, self.base_url))
        except httpx.TimeoutException as exc:
            raise self._no_first_byte() from exc
        except httpx.HTTPError as exc:
            return _Failed(connect_error(exc, self.base_url))
        try:
            if response.status_code >= 400:
                body = await response.aread()
                await response.aclose()
                return self._refused(response, payload, body)
            chunks = response.aiter_bytes()
            first = await self._next_chunk(chunks, self.settings.request_timeout, first=True)
        except StreamBroken as exc:
            # Dropped before a single byte of the reply: nothing is lost by asking again.
            await response.aclose()
            return _Failed(exc)
        except BaseException:
            await response.aclose()
            raise
        if first is None:
            await response.aclose()
            return _Failed(StreamBroken(f"The server at {self.base_url} sent an empty reply.", "Send again."))
        return _Opened(response, chunks, first)

    def _refused(self, response: httpx.Response, payload: dict[str, Any], body: bytes) -> _Failed | None:
        status = response.status_code
        if status == 400 and "tools" in payload and "tool" in error_detail(body).lower():
            if self.settings.tools == "native":
                return _Failed(BadRequest(
                    f"The server at {self.base_url} does not accept tool calls. The server said: {error_detail(body, secret=self._secret())}",
                    'Set tools = "auto" or "inline" in the config so the diary uses the inline form.',
                ))
            log.info("%s rejects native tools; using the inline form from now on", self.base_url)
            self.supports_tools = False
            return None
        error = http_error(status, body, url=self.base_url, model=self.model, secret=self._secret())
        wait = _retry_after(response.headers.get("retry-after"))
        if error.retryable and wait is not None and wait > MAX_RETRY_AFTER:
            # Longer than anyone would watch a spinner: say so rather than wait.
            error = type(error)(error.message, f"The server asks to wait {wait:.0f} s; send again after that.")
            error.retryable = False
        return _Failed(error, wait)

    def _no_first_byte(self, waited: float | None = None) -> StreamStalled:
        # Not retried: a busy server made busier, and the user's wait doubled.
        error = StreamStalled(
            f"The server at {self.base_url} sent nothing for {waited or self.settings.request_timeout:.0f} s.",
            "It may be loading the model or busy with a long prompt; send again, or raise request_timeout.",
        )
        error.retryable = False
        return error

    async def _next_chunk(self, chunks: AsyncIterator[bytes], timeout: float, *, first: bool = False) -> bytes | None:
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

    async def _events(self, chunks: AsyncIterator[bytes], first: bytes) -> AsyncIterator[Event]:
        parser = SSEParser()
        calls = ToolCallAccumulator()
        finish: str | None = None
        done = False
        chunk: bytes | None = first
        while chunk is not None and not done:
            for sse in parser.feed(chunk):
                if sse.data.strip() == "[DONE]":
                    done = True
                    break
                for event in self._parse_chunk(sse.data, calls):
                    if isinstance(event, Done):
                        finish = event.finish_reason
                    else:
                        yield event
            if not done:
                chunk = await self._next_chunk(chunks, self.settings.stall_timeout)
        if not done:
            for sse in parser.close():
                if sse.data.strip() != "[DONE]":
                    for event in self._parse_chunk(sse.data, calls):
                        if isinstance(event, Done):
                            finish = event.finish_reason
                        else:
                            yield event
            if finish is None:
                raise StreamBroken(
                    f"The connection to {self.base_url} closed before the reply finished.",
                    "What arrived is kept. Send again.",
                )
        for call in calls.finish():
            yield call
        yield Done(finish)

    def _parse_chunk(self, data: str, calls: ToolCallAccumulator) -> list[Event]:
        try:
            chunk = json.loads(data)
        except json.JSONDecodeError:
            return []
        if not isinstance(chunk, dict):
            return []
        if "error" in chunk:
            raise http_error(500, data.encode(), url=self.base_url, model=self.model, secret=self._secret())
        events: list[Event] = []
        usage = chunk.get("usage")
        if isinstance(usage, dict):
            details = usage.get("prompt_tokens_details") or {}
            events.append(Usage(
                prompt_tokens=usage.get("prompt_tokens"),
                completion_tokens=usage.get("completion_tokens"),
                cache_read_tokens=details.get("cached_tokens") if isinstance(details, dict) else None,
            ))
        for choice in chunk.get("choices") or []:
            delta = choice.get("delta") or {}
            content = delta.get("content")
            if isinstance(content, str) and content:
                events.append(TextDelta(content))
            if isinstance(delta.get("tool_calls"), list):
                events.extend(calls.feed(delta["tool_calls"]))
            if choice.get("finish_reason"):
                events.append(Done(choice["finish_reason"]))
        return events

    async def count_tokens(self, messages: list[ChatMessage]) -> TokenCount:
        """The server's own tokenizer on the messages as text, plus a few tokens
        of chat framing each; an estimate when the server has no tokenizer."""
        text = "".join(f"{m.get('role', '')}\n{m.get('content') or ''}\n" for m in messages)
        root = self.base_url.removesuffix("/v1")
        for tokenizer in list(self._tokenizers):
            path, field, label = tokenizer
            try:
                response = await self.client.post(f"{root}/{path}", json={field: text}, headers=self._headers(), timeout=5.0)
            except httpx.HTTPError:
                return estimate_tokens(messages)  # the server is away; ask it again next time
            tokens = _token_list(response)
            if tokens is not None:
                self._tokenizers = [tokenizer]
                return TokenCount(len(tokens) + FRAMING_TOKENS * len(messages), exact=True, method=label)
            self._tokenizers.remove(tokenizer)
        return estimate_tokens(messages)

    async def check(self) -> str:
        url = f"{self.base_url}/models"
        try:
            response = await self.client.get(url, headers=self._headers(), timeout=10.0)
        except httpx.HTTPError as exc:
            raise connect_error(exc, self.base_url) from exc
        if response.status_code >= 400:
            raise http_error(response.status_code, response.content, url=self.base_url, model=self.model, secret=self._secret())
        try:
            models = [str(m.get("id")) for m in response.json().get("data", []) if isinstance(m, dict)]
        except (ValueError, AttributeError):
            models = []
        if self.settings.model and models and self.settings.model not in models:
            raise ModelNotFound(
                f"The server at {self.base_url} does not list the model '{self.settings.model}'.",
                f"It has: {', '.join(models[:10])}. Set `model` to one of them.",
            )
        listed = ", ".join(models[:5]) + (f" and {len(models) - 5} more" if len(models) > 5 else "")
        return f"{self.base_url} answers; models: {listed or 'none listed'}"

    async def aclose(self) -> None:
        if self._own_client:
            await self.client.aclose()


@dataclass(frozen=True, slots=True)
class _Opened:
    response: httpx.Response
    chunks: AsyncIterator[bytes]
    first: bytes


@dataclass(frozen=True, slots=True)
class _Failed:
    error: BackendError
    wait: float | None = None
    """Seconds the server asked for (Retry-After), if any."""


def _backoff(retry: int) -> float:
    """Exponential, with jitter so clients that failed together do not return together."""
    return min(MAX_BACKOFF, 0.25 * 2**retry) * (0.5 + random.random() / 2)


def _retry_after(value: str | None) -> float | None:
    try:
        seconds = float(value) if value is not None else None
    except ValueError:
        return None  # an HTTP date: rare from API servers, and backoff does as well
    return max(0.0, seconds) if seconds is not None else None


def _token_list(response: httpx.Response) -> list[Any] | None:
    if response.status_code != 200:
        return None
    try:
        tokens = response.json().get("tokens")
    except (ValueError, AttributeError):
        return None
    return tokens if isinstance(tokens, list) else None
