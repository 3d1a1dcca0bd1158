"""Tier 3: the diary the character writes with the save_memory tool."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from omoide.domain import DiaryEntry
from omoide.llm.base import ChatMessage, ToolSpec
from omoide.memory.inline import InlineTag, InlineTagFilter

SAVE_MEMORY = ToolSpec(
    name="save_memory",
    description=(
        "Write a short entry in your private diary about something that matters: "
        "an emotional moment, a promise, a plan, a secret shared, something new you "
        "learned about the user. Write it in your own voice. The diary is your long-term memory."
    ),
    parameters={
        "type": "object",
        "properties": {
            "content": {"type": "string", "description": "The diary entry, in your own words."},
            "importance": {"type": "integer", "minimum": 1, "maximum": 5,
                           "description": "How much it matters, 1 (a detail) to 5 (unforgettable)."},
            "emotion": {"type": "string", "description": "One word for the feeling attached, e.g. joy, grief, trust."},
            "about_user": {"type": "boolean", "description": "True when it is a lasting fact about the user (name, job, likes, allergies)."},
        },
        "required": ["content"],
    },
)

NATIVE_INSTRUCTIONS = (
    "You keep a private diary. When something significant happens (an emotional moment, "
    "a promise, a plan, a secret), call the save_memory tool with a short entry in your own "
    "voice, then carry on with your reply. Never mention the diary to the user."
)

INLINE_INSTRUCTIONS = (
    "You keep a private diary. When something significant happens (an emotional moment, "
    "a promise, a plan, a secret), write a short entry in your own voice between "
    "<save_memory> and </save_memory> anywhere in your reply. The user never sees it. "
    'You may open it as <save_memory importance="1-5" emotion="word" about_user="true"> '
    "to say how much it matters, how it felt, and that it is a lasting fact about the user."
)

OPEN_TAG = "<save_memory>"
CLOSE_TAG = "</save_memory>"


@dataclass(frozen=True, slots=True)
class MemoryNote:
    """What the character asked to remember, as it arrived (native or inline)."""

    content: str
    importance: int | None = None
    """1-5 when given and readable; None means the default."""
    emotion: str | None = None
    about_user: bool = False

    @classmethod
    def from_arguments(cls, arguments: Mapping[str, object]) -> MemoryNote:
        """From a tool call's arguments or an inline tag's attributes, leniently:
        a value that cannot be read is ignored, never an error."""
        content = arguments.get("content")
        return cls(
            content=content if isinstance(content, str) else "",
            importance=parse_importance(arguments.get("importance")),
            emotion=_emotion(arguments.get("emotion")),
            about_user=_truthy(arguments.get("about_user")),
        )

    @classmethod
    def from_tag(cls, tag: InlineTag) -> MemoryNote:
        return cls.from_arguments({**tag.attrs, "content": tag.text})


def parse_importance(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    try:
        number = int(str(value).strip()) if not isinstance(value, int) else value
    except ValueError:
        return None
    return min(max(number, 1), 5)


def _emotion(value: object) -> str | None:
    if not isinstance(value, str):
        return None
    words = re.findall(r"[^\W\d_]+", value)
    return words[0].lower()[:24] if words else None


def _truthy(value: object) -> bool:
    return value is True or (isinstance(value, str) and value.strip().lower() in ("true", "yes", "1"))


class InlineMemoryFilter:
    """Takes <save_memory>...</save_memory> out of a streamed reply; returns the entries' texts."""

    def __init__(self) -> None:
        self._filter = InlineTagFilter(("save_memory",))

    def feed(self, text: str) -> tuple[str, list[str]]:
        visible, tags = self._filter.feed(text)
        return visible, [t.text for t in tags]

    def flush(self) -> tuple[str, list[str]]:
        visible, tags = self._filter.flush()
        return visible, [t.text for t in tags]


def strip_inline_tags(text: str) -> tuple[str, list[str]]:
    f = InlineMemoryFilter()
    visible, entries = f.feed(text)
    rest, more = f.flush()
    return visible + rest, [e for e in entries + more if e]


def render_diary(entries: list[DiaryEntry], max_lines: int) -> str:
    """The diary as markdown, keeping only its last `max_lines` lines."""
    text = "\n".join(entry.as_markdown() for entry in entries).strip()
    lines = text.splitlines()
    return "\n".join(lines[-max_lines:]) if len(lines) > max_lines else text


def diary_lines(entries: list[DiaryEntry]) -> int:
    return sum(len(entry.as_markdown().strip().splitlines()) for entry in entries)


DIARY_COMPRESSION_PROMPT = """Compress the following diary entries written by {name}. Merge related entries,
remove redundant information, but preserve:
1. Key relationship milestones
2. Emotional turning points
3. Promises and commitments
4. {name}'s evolving feelings
Keep {name}'s own voice (first person). Write short dated paragraphs or lines, at most {max_lines} lines.
Reply with the compressed diary only."""


def diary_compression_request(name: str, entries: list[DiaryEntry], max_lines: int) -> list[ChatMessage]:
    diary = "\n".join(entry.as_markdown() for entry in entries)
    return [
        {"role": "system", "content": DIARY_COMPRESSION_PROMPT.format(name=name, max_lines=max_lines)},
        {"role": "user", "content": f"Diary:\n\n{diary}\n\nCompressed diary:"},
    ]


MAX_ENTRY_CHARS = 2000
"""A diary entry is a few lines; every later prompt carries it, so a runaway
tool call (a megabyte of arguments) must not become one."""


def clean_entry(text: str) -> str:
    return re.sub(r"\s+\n", "\n", text).strip()


def cap_entry(text: str) -> tuple[str, int | None]:
    """The entry cut to MAX_ENTRY_CHARS, and its original length when it was cut."""
    if len(text) <= MAX_ENTRY_CHARS:
        return text, None
    return text[:MAX_ENTRY_CHARS].rstrip() + "…", len(text)


def cut_note(length: int) -> str:
    return f"The diary entry was {length:,} characters long and was cut to the first {MAX_ENTRY_CHARS:,}; keep entries to a few lines."
