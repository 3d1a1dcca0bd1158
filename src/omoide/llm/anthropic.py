"""Anthropic's Messages API, streamed over httpx, with prompt caching.

The leading system message (card and memory) becomes the `system` blocks and
the volatile tail goes at the end of the last user turn, after the window;
`cache_control` breakpoints go at the end of the card, the memory and the
window (never more than four), so a long chat pays for its prefix once. Errors that arrive inside the stream (`overloaded_error` and
friends) end the reply like any other failure.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from typing import Any

import httpx

from omoide.bounded_http import BoundExceeded, fetch
from omoide.config.sections import BackendSettings
from omoide.errors import BackendError, BadRequest, ConfigError, RateLimited, ServerFailed
from omoide.llm.base import ChatMessage, Done, Event, TextDelta, TokenCount, ToolCall, ToolCallDelta, ToolSpec, Usage, estimate_tokens
from omoide.llm.errors import connect_error, http_error
from omoide.llm.sse import SSEParser
from omoide.llm.transport import Failed, Transport

API_VERSION = "2023-06-01"
DEFAULT_URL = "https://api.anthropic.com"
MAX_BREAKPOINTS = 4
OPENING = "(The chat begins.)"
CACHE = {"type": "ephemeral"}
COUNT_DEADLINE = 10.0
"""Seconds a count_tokens request may take in all; past it the count is estimated."""
COUNT_MAX_BYTES = 1024 * 1024
"""Largest answer read from count_tokens or /v1/models (each is a few hundred bytes)."""

log = logging.getLogger(__name__)


def to_anthropic(messages: list[ChatMessage]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """OpenAI-style messages -> (system blocks, messages).

    The leading system message (card, then memory) becomes the `system` blocks,
    each with a cache breakpoint. A later system message is the volatile tail
    (clock, new diary lines, triggered lore): Anthropic caches `system` before
    the messages, so a tail there would change the prefix every turn; it goes
    after the window instead, as the last text of the last user turn. The third
    breakpoint marks the end of the window, just before the tail, so the next
    turn, whose window only grows, reads the whole window from the cache."""
    system: list[dict[str, Any]] = []
    turns: list[dict[str, Any]] = []
    window_end: dict[str, Any] | None = None
    tail_seen = False
    leading = True
    for message in messages:
        role, content = message["role"], message.get("content") or ""
        if role == "system" and leading:
            split = message.get("cache_split")
            if isinstance(split, int) and 0 < split < len(content):
                # The card outlives every compression: cache it on its own.
                system.append({"type": "text", "text": content[:split], "cache_control": CACHE})
                content = content[split:].lstrip("\n")
            system.append({"type": "text", "text": content, "cache_control": CACHE})
            continue
        leading = False
        if role == "system":
            block = {"type": "text", "text": content}
            if not tail_seen and turns and turns[-1]["content"]:
                window_end = turns[-1]["content"][-1]
            tail_seen = True
            if turns and turns[-1]["role"] == "user":
                turns[-1]["content"].append(block)
            else:
                turns.append({"role": "user", "content": [block]})
            continue
        if role == "tool":
            blocks: list[dict[str, Any]] = [
                {"type": "tool_result", "tool_use_id": message.get("tool_call_id", ""), "content": content},
            ]
            _append(turns, "user", blocks)
            continue
        blocks = [{"type": "text", "text": content}] if content else []
        for call in message.get("tool_calls") or []:
            function = call.get("function", {})
            try:
                arguments = json.loads(function.get("arguments") or "{}")
            except json.JSONDecodeError:
                arguments = {}
            blocks.append({"type": "tool_use", "id": call.get("id", ""), "name": function.get("name", ""), "input": arguments})
        _append(turns, role, blocks or [{"type": "text", "text": "…"}])
    if turns and turns[0]["role"] == "assistant":
        # The Messages API wants a user turn first; a chat opens with the character's greeting.
        turns.insert(0, {"role": "user", "content": [{"type": "text", "text": OPENING}]})
    # The end of the raw window (the last block before the tail) is the end of
    # the stable prefix for the next turn.
    if not tail_seen and turns and turns[-1]["content"]:
        window_end = turns[-1]["content"][-1]
    if window_end is not None:
        window_end["cache_control"] = CACHE
    _limit_breakpoints(system, turns)
    return system, turns


def _append(turns: list[dict[str, Any]], role: str, blocks: list[dict[str, Any]]) -> None:
    if turns and turns[-1]["role"] == role:  # the API wants alternating roles
        turns[-1]["content"].extend(blocks)
    else:
        turns.append({"role": role, "content": blocks})


def _limit_breakpoints(system: list[dict[str, Any]], turns: list[dict[str, Any]]) -> None:
    marked = [b for b in system if "cache_control" in b]
    marked += [b for t in turns for b in t["content"] if "cache_control" in b]
    # Keep the last leading system block and the last message; drop the rest from the front.
    for block in marked[: max(0, len(marked) - MAX_BREAKPOINTS)]:
        del block["cache_control"]



class AnthropicBackend:
    name = "anthropic"
    supports_tools = True

    def __init__(self, settings: BackendSettings, client: httpx.AsyncClient | None = None) -> None:
        if settings.api_key is None:
            raise ConfigError("The anthropic backend needs an API key.", "Set OMOIDE_API_KEY or api_key in the config file.")
        self.settings = settings
        self.base_url = (settings.base_url or DEFAULT_URL).removesuffix("/v1")
        self.model = settings.model or "claude-sonnet-4-5"
        self.supports_tools = settings.tools != "inline"
        self.transport = Transport(settings, self.base_url, client)
        self.client = self.transport.client
        self._can_count = True

    def _headers(self) -> dict[str, str]:
        assert self.settings.api_key is not None
        return {
            "x-api-key": self.settings.api_key.get_secret_value(),
            "anthropic-version": API_VERSION,
            "content-type": "application/json",
            "accept": "text/event-stream",
        }

    def payload(self, messages: list[ChatMessage], tools: list[ToolSpec] | None, tool_choice: Any, max_tokens: int | None) -> dict[str, Any]:
        system, turns = to_anthropic(messages)
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": max_tokens or self.settings.max_tokens,
            "messages": turns,
            "stream": True,
            "temperature": min(self.settings.temperature, 1.0),
        }
        if system:
            body["system"] = system
        if tools and self.supports_tools:
            body["tools"] = [{"name": t.name, "description": t.description, "input_schema": t.parameters} for t in tools]
            if isinstance(tool_choice, dict) and tool_choice.get("function"):
                body["tool_choice"] = {"type": "tool", "name": tool_choice["function"]["name"]}
        return body

    def stream(
        self,
        messages: list[ChatMessage],
        *,
        tools: list[ToolSpec] | None = None,
        tool_choice: str | dict[str, Any] | None = None,
        max_tokens: int | None = None,
        cache_key: str | None = None,  # Anthropic caches by prefix across requests: no slots to choose
    ) -> AsyncIterator[Event]:
        url = f"{self.base_url}/v1/messages"
        body = self.payload(messages, tools, tool_choice, max_tokens)
        secret = self._headers()["x-api-key"]

        def build() -> httpx.Request:
            return self.client.build_request("POST", url, json=body, headers=self._headers())

        def refused(response: httpx.Response, raw: bytes) -> Failed:
            return self.transport.refused(response, raw, model=self.model, secret=secret)

        # Returned, not iterated here: closing the stream then closes the response itself.
        return self.transport.stream(build, refused, self._events)

    async def _events(self, chunks: AsyncIterator[bytes]) -> AsyncIterator[Event]:
        parser = SSEParser()
        blocks: dict[int, dict[str, Any]] = {}
        usage: dict[str, int | None] = {}
        stop_reason: str | None = None
        finished = False
        async for chunk in chunks:
            for sse in parser.feed(chunk):
                try:
                    data = json.loads(sse.data)
                except json.JSONDecodeError:
                    continue
                if not isinstance(data, dict):
                    continue
                kind = data.get("type", sse.event)
                if kind == "message_start":
                    u = (data.get("message") or {}).get("usage") or {}
                    usage.update(
                        prompt=u.get("input_tokens"), read=u.get("cache_read_input_tokens"),
                        write=u.get("cache_creation_input_tokens"), completion=u.get("output_tokens"),
                    )
                elif kind == "content_block_start":
                    block = data.get("content_block") or {}
                    blocks[data.get("index", 0)] = {"type": block.get("type"), "id": block.get("id"), "name": block.get("name"), "json": []}
                    if block.get("type") == "tool_use":
                        yield ToolCallDelta(index=data.get("index", 0), id=block.get("id"), name=block.get("name"))
                elif kind == "content_block_delta":
                    delta = data.get("delta") or {}
                    if delta.get("type") == "text_delta" and delta.get("text"):
                        yield TextDelta(delta["text"])
                    elif delta.get("type") == "input_json_delta":
                        blocks.setdefault(data.get("index", 0), {"type": "tool_use", "json": []})["json"].append(delta.get("partial_json", ""))
                        yield ToolCallDelta(index=data.get("index", 0), arguments=delta.get("partial_json", ""))
                elif kind == "content_block_stop":
                    block = blocks.get(data.get("index", 0))
                    if block and block.get("type") == "tool_use":
                        raw = "".join(block["json"])
                        try:
                            arguments = json.loads(raw) if raw.strip() else {}
                        except json.JSONDecodeError:
                            arguments = {}
                        yield ToolCall(id=block.get("id") or "", name=block.get("name") or "", arguments=arguments if isinstance(arguments, dict) else {}, raw_arguments=raw)
                elif kind == "message_delta":
                    stop_reason = (data.get("delta") or {}).get("stop_reason") or stop_reason
                    if (data.get("usage") or {}).get("output_tokens") is not None:
                        usage["completion"] = data["usage"]["output_tokens"]
                elif kind == "message_stop":
                    finished = True
                    break
                elif kind == "error":
                    raise _stream_error(data.get("error") or {}, self.base_url)
            if finished:
                break
        if not finished:
            raise self.transport.ended_early()
        yield Usage(prompt_tokens=usage.get("prompt"), completion_tokens=usage.get("completion"),
                    cache_read_tokens=usage.get("read"), cache_write_tokens=usage.get("write"))
        yield Done({"end_turn": "stop", "tool_use": "tool_calls", "max_tokens": "length"}.get(stop_reason or "", stop_reason))

    async def count_tokens(self, messages: list[ChatMessage]) -> TokenCount:
        if not self._can_count:
            return estimate_tokens(messages)
        system, turns = to_anthropic(messages)
        body: dict[str, Any] = {"model": self.model, "messages": turns}
        if system:
            body["system"] = system
        try:
            response = await fetch(self.client, "POST", f"{self.base_url}/v1/messages/count_tokens", json=body,
                                   headers=self._headers(), deadline=COUNT_DEADLINE, max_bytes=COUNT_MAX_BYTES)
            if response.status_code == 200:
                return TokenCount(int(response.json()["input_tokens"]), exact=True, method="Anthropic count_tokens")
            if response.status_code in (404, 405):
                self._can_count = False  # a proxy or look-alike without the endpoint: stop asking
        except BoundExceeded as exc:
            log.warning("token counting: %s; counting by estimate from now on", exc)
            self._can_count = False
        except (httpx.HTTPError, KeyError, ValueError, TypeError):
            pass
        return estimate_tokens(messages)

    async def check(self) -> str:
        try:
            response = await fetch(self.client, "GET", f"{self.base_url}/v1/models", headers=self._headers(),
                                   deadline=10.0, max_bytes=COUNT_MAX_BYTES)
        except httpx.HTTPError as exc:
            raise connect_error(exc, self.base_url) from exc
        except BoundExceeded as exc:
            raise ServerFailed(f"The server at {self.base_url} did not answer its model list sensibly: {exc}.",
                               "Check base_url.") from exc
        if response.status_code >= 400:
            raise http_error(response.status_code, response.content, url=self.base_url, model=self.model, secret=self._headers()["x-api-key"])
        return f"{self.base_url} answers; model {self.model}"

    async def aclose(self) -> None:
        await self.transport.aclose()


def _stream_error(error: dict[str, Any], url: str) -> BackendError:
    kind, message = error.get("type", "error"), error.get("message", "")
    if kind in ("overloaded_error", "api_error"):
        return ServerFailed(f"Anthropic reported {kind} mid-reply: {message}.", "What arrived is kept. Send again in a moment.")
    if kind == "rate_limit_error":
        return RateLimited(f"Anthropic is rate-limiting requests: {message}.", "Wait a moment and send again.")
    return BadRequest(f"Anthropic reported {kind}: {message}.", "Check the model and settings with `omoide doctor`.")
