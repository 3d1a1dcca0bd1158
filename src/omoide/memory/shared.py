"""Memory work sent as a continuation of the chat's own prompt.

A llama.cpp-style server keeps the last prompt it evaluated in its cache slot
(llama.cpp's server keeps one per slot, and the embedded engine gives each speaker one). A summary
request of its own replaces the chat's prompt there, and the next reply is
evaluated from scratch. Sent instead as the chat's prompt (card, memory, the
raw window and the reply just stored, laid out exactly as the next turn will
lay them out) with the instruction appended as one more user message, it
extends the cached prefix: the server evaluates the instruction only, and the
next turn finds everything up to the reply still cached.

The instruction carries the same material as the standalone request (the
messages to summarize are quoted again), so the answer is the same kind of
text and is parsed the same way.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import tzinfo
from typing import Any

from omoide.domain.chat import Message
from omoide.llm.base import MEMORY_TASK, Backend, ChatMessage, Event, TokenCount, ToolSpec, is_memory_task
from omoide.llm.slots import MEMORY_CACHE_KEY
from omoide.memory.prompt.layers import window_messages
from omoide.memory.prompt.model import AssembledPrompt

CHARS_PER_TOKEN = 3
"""A cautious count of characters per token for text not yet counted (more tokens than most models use)."""
FRAMING_MARGIN = 32
"""Tokens kept free when a tokenizer counted the text but the chat template's framing was estimated."""


@dataclass(frozen=True, slots=True)
class ChatPrefix:
    """The chat's prompt as the next turn will begin it, and about how many tokens it takes."""

    messages: list[ChatMessage]
    tokens: int
    head_id: int | None = None
    """The message it ends with (the reply just stored): work on another path must not continue it."""
    parent_id: int | None = None
    """The message before it (the user's, which a swipe of the reply keeps)."""
    head_depth: int | None = None
    """The depth of `head_id` in the tree: how far back a message of its path stands."""

    def upto(self, anchor_id: int) -> ChatPrefix | None:
        """The prompt as far as `anchor_id`, where memory anchored there is made: all
        of it at the head; without the reply when anchored at the message before it
        (a swipe of the reply keeps that memory, so the reply must not shape it);
        None further back (the request then stands alone)."""
        if anchor_id == self.head_id:
            return self
        if anchor_id == self.parent_id and len(self.messages) > 1:
            reply = self.messages[-1]
            return ChatPrefix(self.messages[:-1], max(self.tokens - len(reply.get("content", "")) // CHARS_PER_TOKEN - 8, 0),
                              self.parent_id, None, None if self.head_depth is None else self.head_depth - 1)
        return None

    def through(self, message: Message) -> ChatPrefix | None:
        """The prompt as far as `message`, where a summary of the messages up to it
        is made: nothing said after it may reach that summary (memory work covers
        exactly its span). Found by the message's own text at the end of a turn of
        the prompt; None when the layout holds no such turn (the request then
        stands alone)."""
        if message.id == self.head_id:
            return self
        text = message.content.strip()
        if not text or self.head_depth is None or message.depth > self.head_depth:
            return None
        at = len(self.messages) - 1 - (self.head_depth - message.depth)  # a turn of the prompt per message
        if at < 1 or not str(self.messages[at].get("content", "")).rstrip().endswith(text):
            return None  # another layout (a scene's runs, summary parts in the window): stand alone
        kept = self.messages[: at + 1]
        share = sum(len(str(m.get("content", ""))) for m in kept)
        whole = max(1, sum(len(str(m.get("content", ""))) for m in self.messages))
        return ChatPrefix(kept, self.tokens * share // whole, message.id, message.parent_id, message.depth)


def chat_prefix(prompt: AssembledPrompt, reply: Message, tz: tzinfo | None = None) -> ChatPrefix:
    """The prompt `reply` answered, without its volatile tail (the clock and
    the rest, which the next turn moves to after the window), and with `reply`
    appended as the next turn's window shows it."""
    messages = list(prompt.messages)
    if len(messages) > 1 and messages[-1]["role"] == "system":
        messages.pop()
    shown = window_messages([reply], tz)
    tail = sum(layer.tokens for layer in prompt.layers if layer.name in ("passages", "tail"))  # the closing message
    tokens = max(prompt.total_tokens - tail, 0) + sum(len(m.get("content", "")) for m in shown) // CHARS_PER_TOKEN + 8
    return ChatPrefix([*messages, *shown], tokens, reply.id, reply.parent_id, reply.depth)


def continue_chat(prefix: ChatPrefix, request: list[ChatMessage]) -> list[ChatMessage]:
    """`request` (a standalone memory request: its instruction and its material)
    as one user message appended to the chat's prompt."""
    task = "\n\n".join(m.get("content", "").strip() for m in request if m.get("content", "").strip())
    return [*prefix.messages, {"role": "user", "content": f"{MEMORY_TASK}\n\n{task}"}]


def fits(prefix: ChatPrefix, request: list[ChatMessage], *, max_tokens: int, context_size: int) -> bool:
    """Whether the continued request, and an answer of `max_tokens`, fit the context."""
    extra = sum(len(m.get("content", "")) for m in request) // CHARS_PER_TOKEN + len(MEMORY_TASK) // CHARS_PER_TOKEN + 16
    return prefix.tokens + extra + max_tokens <= context_size


async def continued(
    backend: Backend, prefix: ChatPrefix | None, request: list[ChatMessage], *, max_tokens: int, context_size: int,
) -> list[ChatMessage]:
    """`request` as a continuation of `prefix`, or as it is when there is no
    prefix or the continuation (and its answer) would not fit the context.

    The cautious estimate decides when it says the continuation fits. When it
    says no, the backend's tokenizer has the last word, where it has one: a
    long chat with a summary near `summary_merge_chars` is often within the
    context by count and over it by estimate, and a request sent alone there
    evicts the chat's cache for the next reply."""
    if prefix is None or getattr(backend, "memory_alone", False):
        return request
    continuation = continue_chat(prefix, request)
    if fits(prefix, request, max_tokens=max_tokens, context_size=context_size):
        return continuation
    count = await backend.count_tokens(continuation)
    margin = 0 if count.exact else FRAMING_MARGIN
    if count.tokenized and count.tokens + max_tokens + margin <= context_size:
        return continuation
    return request


class Continuing:
    """The chat's backend for work that reads the chat's own conversation (the
    world pass of the conversation that just ended): every request is sent as
    a continuation of the chat's prompt. Closing it leaves the backend open."""

    def __init__(self, backend: Backend, prefix: ChatPrefix, *, context_size: int, max_tokens: int) -> None:
        self.backend = backend
        self.prefix = prefix
        self.context_size = context_size
        self.max_tokens = max_tokens
        self.name, self.model, self.supports_tools = backend.name, backend.model, backend.supports_tools

    async def stream(
        self,
        messages: list[ChatMessage],
        *,
        tools: list[ToolSpec] | None = None,
        tool_choice: str | dict[str, Any] | None = None,
        max_tokens: int | None = None,
        cache_key: str | None = None,  # memory work has a slot of its own, whoever asks
    ) -> AsyncIterator[Event]:
        request = await continued(self.backend, self.prefix, messages, max_tokens=max_tokens or self.max_tokens,
                                  context_size=self.context_size)
        events = self.backend.stream(request, tools=tools, tool_choice=tool_choice, max_tokens=max_tokens,
                                     cache_key=MEMORY_CACHE_KEY)
        try:
            async for event in events:
                yield event
        finally:
            close = getattr(events, "aclose", None)  # the caller stopped reading: close the stream too
            if close is not None:
                await close()

    async def count_tokens(self, messages: list[ChatMessage]) -> TokenCount:
        return await self.backend.count_tokens(messages)

    async def check(self) -> str:
        return await self.backend.check()

    async def aclose(self) -> None:
        pass


def cache_key_of(prefix: ChatPrefix | None, messages: list[ChatMessage]) -> str:
    """The cache slot's key for memory work: a slot of its own, whether the
    request continues the chat's prompt or stands alone. Measured on the
    embedded engine (docs/engine.md): on the speaker's slot a continuation
    evaluated its task and quoted messages every time, while on a slot of its
    own each memory request shares most of the previous one, and the speakers'
    slots keep their prompts. On a server with one slot the key changes
    nothing, and the continuation still keeps the chat's prefix there."""
    return MEMORY_CACHE_KEY


def task_of(messages: list[ChatMessage]) -> str:
    """The task a memory request asks for, sent alone or as a continuation of
    the chat: for servers and logs that tell requests apart."""
    if messages and is_memory_task(messages[-1]):
        return messages[-1].get("content", "")[len(MEMORY_TASK):].lstrip()
    return messages[0].get("content", "") if messages else ""
