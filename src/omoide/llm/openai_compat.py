"""Any OpenAI-compatible /v1/chat/completions server, streamed over httpx.

Retries only before the first byte of a reply arrives (see transport.py);
tool calls arrive in fragments and are put together (toolcalls.py).
"""

from __future__ import annotations

import ipaddress
import json
import logging
from collections.abc import AsyncIterator
from contextlib import aclosing
from typing import Any

import httpx

from omoide.bounded_http import BoundExceeded, SmallResponse, fetch
from omoide.config.sections import BackendSettings
from omoide.errors import BadRequest, ConfigError, ModelNotFound, ServerFailed
from omoide.llm.embeddings import ServerEmbeddings
from omoide.llm.base import WIRE_KEYS, ChatMessage, Done, Event, TextDelta, TokenCount, ToolSpec, Usage, estimate_tokens, without_tools
from omoide.llm.errors import connect_error, error_detail, http_error
from omoide.llm.slots import SlotTable
from omoide.llm.sse import SSEParser
from omoide.llm.toolcalls import ToolCallAccumulator
from omoide.llm.transport import Failed, Transport
from omoide.safe_text import some

FRAMING_TOKENS = 2
"""Tokens a chat template adds around each message besides its role and line
breaks (which the counted text holds): a start and an end marker, as ChatML-like
templates write them. An estimate: the server's real template is not known."""
GENERATION_PROMPT_TOKENS = 3
"""The opening of the reply a template appends (`<|im_start|>assistant\n`)."""
TOKENIZERS = (
    ("tokenize", "content", "llama.cpp server tokenizer"),
    ("extras/tokenize", "input", "llama-cpp-python server tokenizer"),  # an older server users may still run
)

COUNT_DEADLINE = 10.0
"""Seconds a token count (template, then tokenizer) may take in all; past it the
count is estimated. A local server counts a whole prompt in milliseconds."""
COUNT_MAX_BYTES = 16 * 1024 * 1024
"""Largest answer to a token-count request: a rendered prompt or a token list
for a context of a million tokens fits."""
MODELS_MAX_BYTES = 8 * 1024 * 1024
"""Largest model list read from /models (about 100,000 names)."""

log = logging.getLogger(__name__)


def _on_this_machine(url: str) -> bool:
    host = (httpx.URL(url).host or "").strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class OpenAICompatBackend:
    name = "openai"
    recaps_in_window = True
    """The summary's newer parts go in the window where they were written
    (memory/timeline.py): a server's prompt cache (llama.cpp's --cache-reuse,
    vLLM's and the cloud APIs' prefix caches) then keeps the window through a
    compression, which only removes old lines and appends. The window already
    carries system text between turns on these servers (notes at a depth)."""

    def __init__(self, settings: BackendSettings, client: httpx.AsyncClient | None = None) -> None:
        if not settings.base_url:
            raise ConfigError("The openai backend needs a base_url.", "Set base_url in the config or OMOIDE_BASE_URL.")
        self.settings = settings
        self.base_url = settings.base_url
        self.model = settings.model or "default"
        self.supports_tools = settings.tools != "inline"
        self.transport = Transport(settings, self.base_url, client)
        self.client = self.transport.client
        self._tokenizers = list(TOKENIZERS)  # narrowed to the one that works, or none
        self._applies_template = True  # until the server shows it has no /apply-template
        self._slots: SlotTable | None = None
        """llama.cpp's cache slots, once a scene asked (None: not asked yet)."""
        self._slots_known = False
        self.embeddings = ServerEmbeddings(self.client, self.base_url, self.model, self._headers)
        """The server's /v1/embeddings, for memories that come to mind (used when it answers)."""

    def _secret(self) -> str | None:
        return self.settings.api_key.get_secret_value() if self.settings.api_key else None

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "text/event-stream"}
        if (key := self._secret()) is not None:
            headers["Authorization"] = f"Bearer {key}"
        return headers

    def _payload(self, messages: list[ChatMessage], tools: list[ToolSpec] | None, tool_choice: Any, max_tokens: int | None) -> dict[str, Any]:
        if tools and not self.supports_tools:
            messages = without_tools(messages, tools)  # the refusal fallback: tell the model the inline form
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
        cache_key: str | None = None,
    ) -> AsyncIterator[Event]:
        url = f"{self.base_url}/chat/completions"
        slot = await self._slot(cache_key)

        def build() -> httpx.Request:
            payload = self._payload(messages, tools, tool_choice, max_tokens)
            if slot is not None:
                payload["id_slot"] = slot
            return self.client.build_request("POST", url, json=payload, headers=self._headers())

        def refused(response: httpx.Response, body: bytes) -> Failed | None:
            return self._refused(response, body, tools_sent=bool(tools) and self.supports_tools)

        async with aclosing(self.transport.stream(build, refused, self._events)) as events:
            async for event in events:
                yield event

    async def _slot(self, cache_key: str | None) -> int | None:
        """The llama.cpp cache slot for `cache_key` (a scene's speaker; None, a
        one-on-one chat), or None on a server that is not llama.cpp's or has one
        slot. Asked once per backend: a llama.cpp server answers /props with its
        number of slots. (Sent with no slot, a reply right after a compression
        shares less than half its prompt with the chat's slot, and llama.cpp
        then gives it the slot used longest ago.) A one-on-one chat asks only a
        server on this machine before its first reply, where the question costs
        no time; a remote one is asked when memory work first names its slot."""
        if self._slots is None and cache_key is None and not _on_this_machine(self.base_url):
            return None
        if self._slots is None:
            self._slots = SlotTable(await self._llama_cpp_slots() or 0)
            self._slots_known = self._slots.slots > 1
        return self._slots.slot(cache_key) if self._slots_known else None

    async def _llama_cpp_slots(self) -> int | None:
        root = self.base_url.removesuffix("/v1")
        try:
            response = await self.client.get(f"{root}/props", headers=self._headers(), timeout=5.0)
            slots = response.json().get("total_slots") if response.status_code == 200 else None
        except (httpx.HTTPError, ValueError, AttributeError):
            return None
        return slots if isinstance(slots, int) and slots > 0 else None

    def _refused(self, response: httpx.Response, body: bytes, *, tools_sent: bool) -> Failed | None:
        if tools_sent and _rejects_tools(response.status_code, error_detail(body)):
            if self.settings.tools == "native":
                return Failed(BadRequest(
                    f"The server at {self.base_url} does not accept tool calls. The server said: {error_detail(body, secret=self._secret())}",
                    'Set tools = "auto" or "inline" in the config so the diary uses the inline form.',
                ))
            log.info("%s rejects native tools; using the inline form from now on", self.base_url)
            self.supports_tools = False
            return None
        return self.transport.refused(response, body, model=self.model, secret=self._secret())

    async def _events(self, chunks: AsyncIterator[bytes]) -> AsyncIterator[Event]:
        parser = SSEParser()
        calls = ToolCallAccumulator()
        finish: str | None = None
        done = False
        async for chunk in chunks:
            for sse in parser.feed(chunk):
                if sse.data.strip() == "[DONE]":
                    done = True
                    break
                for event in self._parse_chunk(sse.data, calls):
                    if isinstance(event, Done):
                        finish = event.finish_reason
                    else:
                        yield event
            if done:
                break
        if not done:
            for sse in parser.close():
                if sse.data.strip() != "[DONE]":
                    for event in self._parse_chunk(sse.data, calls):
                        if isinstance(event, Done):
                            finish = event.finish_reason
                        else:
                            yield event
            if finish is None:
                raise self.transport.ended_early()
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
        """Exact where the server can apply its own chat template (llama.cpp's
        `/apply-template`, then its tokenizer). Otherwise the server's tokenizer
        on the messages' text plus a few tokens of framing each (the template is
        not known here), or a character estimate: both marked as estimates."""
        root = self.base_url.removesuffix("/v1")
        if self._applies_template:
            wire = [{"role": m["role"], "content": m.get("content") or ""} for m in messages]
            try:
                response = await self._post(f"{root}/apply-template", {"messages": wire})
            except httpx.HTTPError:
                return estimate_tokens(messages)  # the server is away; ask it again next time
            except BoundExceeded as exc:
                return self._stop_counting(exc, messages)
            try:
                prompt = response.json().get("prompt") if response.status_code == 200 else None
            except (ValueError, AttributeError):
                prompt = None
            if isinstance(prompt, str):
                tokens = await self._tokenize(root, prompt, special=True)
                if tokens is not None:
                    return TokenCount(tokens, exact=True, method="llama.cpp server: its chat template and tokenizer")
            self._applies_template = False
        text = "".join(f"{m.get('role', '')}\n{m.get('content') or ''}\n" for m in messages)
        tokens = await self._tokenize(root, text, special=False)
        if tokens is not None:
            label = self._tokenizers[0][2] if self._tokenizers else "server tokenizer"
            return TokenCount(tokens + FRAMING_TOKENS * len(messages) + GENERATION_PROMPT_TOKENS, exact=False, method=f"{label}, chat template framing estimated")
        return estimate_tokens(messages)

    async def _post(self, url: str, body: dict[str, Any]) -> SmallResponse:
        return await fetch(self.client, "POST", url, json=body, headers=self._headers(),
                           deadline=COUNT_DEADLINE, max_bytes=COUNT_MAX_BYTES)

    def _stop_counting(self, problem: BoundExceeded, messages: list[ChatMessage]) -> TokenCount:
        """A server that answers a count endlessly or too slowly is not asked again this session."""
        log.warning("token counting: %s; counting by estimate from now on", problem)
        self._applies_template = False
        self._tokenizers = []
        return estimate_tokens(messages)

    async def _tokenize(self, root: str, text: str, *, special: bool) -> int | None:
        for tokenizer in list(self._tokenizers):
            path, field, _label = tokenizer
            body: dict[str, Any] = {field: text}
            if special and path == "tokenize":
                body["add_special"] = True  # the BOS the server adds when it evaluates a chat prompt
            try:
                response = await self._post(f"{root}/{path}", body)
            except httpx.HTTPError:
                return None  # the server is away; ask it again next time
            except BoundExceeded as exc:
                log.warning("token counting: %s; counting by estimate from now on", exc)
                self._tokenizers = []
                return None
            tokens = _token_list(response)
            if tokens is not None:
                self._tokenizers = [tokenizer]
                return len(tokens)
            self._tokenizers.remove(tokenizer)
        return None

    async def list_models(self) -> list[str]:
        """The models the server lists at /models (asked with the key, as a turn is)."""
        url = f"{self.base_url}/models"
        try:
            response = await fetch(self.client, "GET", url, headers=self._headers(), deadline=10.0, max_bytes=MODELS_MAX_BYTES)
        except httpx.HTTPError as exc:
            raise connect_error(exc, self.base_url) from exc
        except BoundExceeded as exc:
            raise ServerFailed(f"The server at {self.base_url} did not answer its model list sensibly: {exc}.",
                               "Check that base_url points at an OpenAI-compatible server.") from exc
        if response.status_code >= 400:
            raise http_error(response.status_code, response.content, url=self.base_url, model=self.model, secret=self._secret())
        try:
            return [str(m.get("id")) for m in response.json().get("data", []) if isinstance(m, dict)]
        except (ValueError, AttributeError):
            return []

    async def check(self) -> str:
        models = await self.list_models()
        if self.settings.model and models and self.settings.model not in models:
            raise ModelNotFound(
                f"The server at {self.base_url} does not list the model '{self.settings.model}'.",
                f"It has {len(models):,}: {some(models, limit=10)}. Set `model` to one of them.",
            )
        listed = some(models, limit=5)
        return f"{self.base_url} answers; models: {listed or 'none listed'}"

    async def aclose(self) -> None:
        await self.transport.aclose()


def _rejects_tools(status: int, detail: str) -> bool:
    # 400 from Ollama ("does not support tools") and vLLM (tool choice needs a
    # parser); llama.cpp builds without --jinja have answered 500.
    return (status in (400, 422, 500, 501)) and "tool" in detail.lower()


def _token_list(response: SmallResponse) -> list[Any] | None:
    if response.status_code != 200:
        return None
    try:
        tokens = response.json().get("tokens")
    except (ValueError, AttributeError):
        return None
    return tokens if isinstance(tokens, list) else None
