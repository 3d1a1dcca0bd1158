"""Any OpenAI-compatible /v1/chat/completions server, streamed over httpx.

Retries (with backoff) only before the first byte of a reply arrives; after
that a failure ends the reply, keeping what arrived. A stream silent for
longer than `stall_timeout` is given up as stalled.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import AsyncIterator
from typing import Any

import httpx

from omoide.config import Settings
from omoide.errors import BackendError, BackendUnreachable, BadRequest, ConfigError, StreamBroken, StreamStalled
from omoide.llm.base import WIRE_KEYS, ChatMessage, Done, Event, TextDelta, TokenCount, ToolSpec, Usage, estimate_tokens
from omoide.llm.errors import RETRYABLE_STATUS, connect_error, error_detail, http_error
from omoide.llm.sse import SSEParser
from omoide.llm.toolcalls import ToolCallAccumulator

MAX_BACKOFF = 8.0


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
        self.client = client or httpx.AsyncClient(
            timeout=httpx.Timeout(settings.request_timeout, read=settings.stall_timeout),
        )
        self._tokenize: str | None = None
        self._tokenize_checked = False

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "text/event-stream"}
        if self.settings.api_key is not None:
            headers["Authorization"] = f"Bearer {self.settings.api_key.get_secret_value()}"
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
        attempt = 0
        while True:
            payload = self._payload(messages, tools, tool_choice, max_tokens)
            try:
                request = self.client.build_request("POST", url, json=payload, headers=self._headers())
                response = await self.client.send(request, stream=True)
            except httpx.TimeoutException as exc:
                error: BackendError = StreamStalled(
                    f"The server at {self.base_url} did not answer within {self.settings.request_timeout:.0f} s.",
                    "It may be loading the model; send again, or raise request_timeout.",
                )
                error.__cause__ = exc
            except httpx.HTTPError as exc:
                error = connect_error(exc, self.base_url)
            else:
                if response.status_code < 400:
                    break
                body = await response.aread()
                await response.aclose()
                if response.status_code == 400 and "tools" in payload and "tool" in error_detail(body).lower():
                    # The server does not do tool calls: fall back to the inline diary form for good.
                    self.supports_tools = False
                    continue
                error = http_error(response.status_code, body, url=self.base_url, model=self.model)
                if response.status_code not in RETRYABLE_STATUS:
                    raise error
                retry_after = _retry_after(response.headers.get("retry-after"))
                if retry_after is not None and attempt < self.settings.max_retries:
                    attempt += 1
                    await asyncio.sleep(retry_after)
                    continue
            limit = 1 if isinstance(error, BackendUnreachable) else self.settings.max_retries
            if attempt >= limit or not error.retryable:
                raise error
            attempt += 1
            await asyncio.sleep(min(MAX_BACKOFF, 0.25 * 2**attempt) * (0.5 + random.random() / 2))
        try:
            async for event in self._events(response):
                yield event
        finally:
            await response.aclose()

    async def _events(self, response: httpx.Response) -> AsyncIterator[Event]:
        parser = SSEParser()
        calls = ToolCallAccumulator()
        finish: str | None = None
        done = False
        chunks = response.aiter_bytes()
        while not done:
            try:
                chunk = await asyncio.wait_for(anext(chunks), timeout=self.settings.stall_timeout)
            except StopAsyncIteration:
                break
            except (TimeoutError, httpx.ReadTimeout) as exc:
                raise StreamStalled(
                    f"The reply stalled: nothing arrived for {self.settings.stall_timeout:.0f} s.",
                    "What arrived is kept. Send again, or raise stall_timeout for a slow server.",
                ) from exc
            except httpx.HTTPError as exc:
                raise StreamBroken(
                    f"The connection to {self.base_url} broke mid-reply ({type(exc).__name__}).",
                    "What arrived is kept. Send again.",
                ) from exc
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
            raise http_error(500, data.encode(), url=self.base_url, model=self.model)
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
        text = "\n".join(str(m.get("content") or "") for m in messages)
        root = self.base_url.removesuffix("/v1")
        candidates = [self._tokenize] if self._tokenize_checked else [f"{root}/tokenize", f"{root}/extras/tokenize"]
        for url in candidates:
            if url is None:
                break
            body = {"content": text} if url.endswith("/tokenize") and "/extras/" not in url else {"input": text}
            try:
                response = await self.client.post(url, json=body, headers=self._headers(), timeout=5.0)
            except httpx.HTTPError:
                continue
            if response.status_code == 200:
                try:
                    data = response.json()
                    tokens = data.get("tokens") if "tokens" in data else None
                    count = len(tokens) if isinstance(tokens, list) else int(data.get("count"))
                except (ValueError, TypeError, AttributeError):
                    continue
                self._tokenize, self._tokenize_checked = url, True
                return TokenCount(count + 4 * len(messages), exact=True, method=f"server tokenizer ({url.rsplit('/', 2)[-2] if '/extras/' in url else 'tokenize'})")
        self._tokenize, self._tokenize_checked = None, True
        return estimate_tokens(messages)

    async def check(self) -> str:
        url = f"{self.base_url}/models"
        try:
            response = await self.client.get(url, headers=self._headers(), timeout=10.0)
        except httpx.HTTPError as exc:
            raise connect_error(exc, self.base_url) from exc
        if response.status_code >= 400:
            raise http_error(response.status_code, response.content, url=self.base_url, model=self.model)
        try:
            models = [m.get("id") for m in response.json().get("data", []) if isinstance(m, dict)]
        except (ValueError, AttributeError):
            models = []
        if self.settings.model and models and self.settings.model not in models:
            raise BadRequest(
                f"The server at {self.base_url} does not list the model '{self.settings.model}'.",
                f"It has: {', '.join(str(m) for m in models[:10])}. Set `model` to one of them.",
            )
        listed = ", ".join(str(m) for m in models[:5]) or "no model list"
        return f"{self.base_url} answers; models: {listed}"

    async def aclose(self) -> None:
        if self._own_client:
            await self.client.aclose()


def _retry_after(value: str | None) -> float | None:
    try:
        seconds = float(value) if value is not None else None
    except ValueError:
        return None
    return seconds if seconds is not None and 0 <= seconds <= 30 else None
