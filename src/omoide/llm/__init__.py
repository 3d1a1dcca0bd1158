"""LLM backends behind one async-generator interface yielding typed events."""

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
)

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
]
