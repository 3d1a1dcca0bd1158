"""The backend protocol and the events a backend yields.

A backend turns a list of chat messages (OpenAI-style dicts) plus optional
tools into an async stream of events. Consumers `match` on the event types.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypedDict, runtime_checkable


class ChatMessage(TypedDict, total=False):
    role: Literal["system", "user", "assistant", "tool"]
    content: str
    tool_calls: list[dict[str, Any]]
    tool_call_id: str
    name: str
    cache_split: int
    """On the leading system message: where the card ends and the memory begins,
    so backends with explicit prompt caching can put a breakpoint there."""
    recap: bool
    """A part of the summary placed in the window: notes at a depth count it with
    the message before it, as SillyTavern counts only chat messages. Never sent."""
    speakers: list[str]
    """On the leading system message: the user's name, then the character's. The
    embedded model ends its turn where it starts a line as either; never sent
    to a server."""


WIRE_KEYS = ("role", "content", "tool_calls", "tool_call_id", "name")
MEMORY_TASK = (
    "(The story pauses here. What follows is not a message in the roleplay: it is a task "
    "for you as the story's writer. Do it exactly as asked, outside the story.)"
)
"""Opens the last message of memory work sent as a continuation of the chat's
prompt (memory/shared.py); a backend that lays chats out its own way (the
embedded play script) sets that message apart as a task, not a line spoken."""


def is_memory_task(message: Mapping[str, Any]) -> bool:
    """Whether `message` is the task of memory work continuing the chat's prompt."""
    return message["role"] == "user" and str(message.get("content") or "").startswith(MEMORY_TASK)


@dataclass(frozen=True, slots=True)
class ToolSpec:
    name: str
    description: str
    parameters: dict[str, Any]
    native_instructions: str = ""
    """The prompt's text telling the model to call this tool, if any."""
    inline_instructions: str = ""
    """What replaces it when the server refuses tools (the inline form)."""

    def openai(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            },
        }


@dataclass(frozen=True, slots=True)
class TextDelta:
    text: str


@dataclass(frozen=True, slots=True)
class ToolCallDelta:
    """A fragment of a streamed tool call, for progress display only."""

    index: int
    id: str | None = None
    name: str | None = None
    arguments: str = ""


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A tool call complete with its parsed arguments."""

    id: str
    name: str
    arguments: dict[str, Any]
    raw_arguments: str = ""


@dataclass(frozen=True, slots=True)
class Usage:
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None


@dataclass(frozen=True, slots=True)
class Done:
    finish_reason: str | None = None
    """'stop', 'length', 'tool_calls' ... as the backend reported it."""


Event = TextDelta | ToolCallDelta | ToolCall | Usage | Done


ESTIMATE = "estimate"
"""The method of a count made from characters, with no tokenizer."""


@dataclass(frozen=True, slots=True)
class TokenCount:
    tokens: int
    exact: bool
    """True when the backend's own tokenizer counted; False for an estimate."""
    method: str = field(default=ESTIMATE)

    @property
    def tokenized(self) -> bool:
        """A tokenizer counted (exactly, or with the chat template's framing
        estimated), not a guess from characters."""
        return self.method != ESTIMATE


@runtime_checkable
class Backend(Protocol):
    name: str
    """Short label for the status bar: 'local', 'openai', 'anthropic'."""
    model: str
    supports_tools: bool
    """Whether native tool calls are offered; otherwise the inline form is used."""

    def stream(
        self,
        messages: list[ChatMessage],
        *,
        tools: list[ToolSpec] | None = None,
        tool_choice: str | dict[str, Any] | None = None,
        max_tokens: int | None = None,
        cache_key: str | None = None,
    ) -> AsyncIterator[Event]:
        """Stream one completion. Raises BackendError subclasses. `cache_key`
        names whose prompt this is (a scene's speaker): a server with several
        cache slots keeps each key's prompt in a slot of its own."""
        ...

    async def count_tokens(self, messages: list[ChatMessage]) -> TokenCount:
        """Tokens the prompt would take, exactly where the backend can tell."""
        ...

    async def check(self) -> str:
        """A quick health check for `omoide doctor`; returns a description."""
        ...

    async def aclose(self) -> None: ...


def without_tools(messages: list[ChatMessage], tools: list[ToolSpec] | None) -> list[ChatMessage]:
    """The messages for a request sent without the tools: each tool's native
    instructions are replaced by its inline ones, so the model is never told to
    call a tool it was not given."""
    swaps = [(t.native_instructions, t.inline_instructions) for t in tools or () if t.native_instructions]
    if not swaps:
        return messages
    out: list[ChatMessage] = []
    for message in messages:
        content = message.get("content")
        if message["role"] == "system" and content:
            for native, inline in swaps:
                content = content.replace(native, inline)
            message = {**message, "content": content}
        out.append(message)
    return out


CHARS_PER_TOKEN_BOUND = 8
"""A generous count of characters per token (about 4 each): an answer longer
than max_tokens * this comes from a server that ignores max_tokens, and is cut
off on our side."""


def estimate_tokens(messages: list[ChatMessage]) -> TokenCount:
    """About four characters a token, plus a few tokens of framing per message."""
    chars = sum(len(m.get("content") or "") for m in messages)
    return TokenCount(tokens=chars // 4 + 4 * len(messages), exact=False, method=ESTIMATE)
