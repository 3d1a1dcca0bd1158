"""LLM backends behind one async-generator interface yielding typed events.

`make_backend(settings)` picks one; the backends themselves are imported lazily
(the embedded one loads llama.cpp, which the CLI must not pay for at start)."""

from omoide.llm.base import (
    Backend,
    ChatMessage,
    Done,
    Event,
    TextDelta,
    TokenCount,
    ToolCall,
    ToolCallDelta,
    ToolSpec,
    Usage,
    estimate_tokens,
)
from omoide.llm.factory import make_backend

__all__ = [
    "Backend",
    "ChatMessage",
    "Done",
    "Event",
    "TextDelta",
    "TokenCount",
    "ToolCall",
    "ToolCallDelta",
    "ToolSpec",
    "Usage",
    "estimate_tokens",
    "make_backend",
]
