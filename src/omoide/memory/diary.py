"""Tier 3: the diary the character writes with the save_memory tool."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from omoide.memory import templates
from omoide.domain.chat import DiaryEntry
from omoide.llm.base import ChatMessage, ToolSpec
from omoide.memory.inline import InlineTag, InlineTagFilter

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
    native_instructions=NATIVE_INSTRUCTIONS,
    inline_instructions=INLINE_INSTRUCTIONS,
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


def entry_lines(entry: DiaryEntry) -> list[str]:
    """An entry's diary lines: the non-blank lines of its text.

    This is the one definition of a diary line, used by the prompt limit
    (`diary_prompt_lines`) and the compression trigger (`diary_compress_lines`)
    alike; an entry's dated heading is framing and never counts."""
    return [line for line in entry.content.strip().splitlines() if line.strip()] or [""]


def diary_lines(entries: list[DiaryEntry]) -> int:
    return sum(len(entry_lines(entry)) for entry in entries)


def _render(entry: DiaryEntry, lines: list[str]) -> str:
    return f"{entry.heading()}\n" + "\n".join(lines) + "\n"


def select_diary(stable: list[DiaryEntry], new: list[DiaryEntry], max_lines: int) -> tuple[list[DiaryEntry], list[DiaryEntry]]:
    """The entries the prompt carries: at most `max_lines` diary lines for the
    stable block and the "written since" block together. The compressed diary
    (always the oldest entry) comes first, with at most half the limit (its
    newest lines; compression is asked for no more), then whole entries newest
    first. An entry left out is one of the oldest not yet compressed, and as
    the compression trigger is never above the limit, the next compression
    folds it in."""
    budget = max_lines
    kept: set[int] = set()
    trimmed: dict[int, DiaryEntry] = {}
    entries = [*stable, *new]
    if entries and entries[0].compressed:
        block = entries[0]
        lines = entry_lines(block)
        room = compressed_lines(max_lines)
        if len(lines) > room:
            lines = lines[-room:]
            trimmed[block.id] = replace(block, content="\n".join(lines))
        kept.add(block.id)
        budget -= len(lines)
        entries = entries[1:]
    for entry in reversed(entries):
        size = len(entry_lines(entry))
        if size > budget:
            break
        kept.add(entry.id)
        budget -= size

    def pick(group: list[DiaryEntry]) -> list[DiaryEntry]:
        return [trimmed.get(e.id, e) for e in group if e.id in kept]

    return pick(stable), pick(new)


def compressed_lines(max_lines: int) -> int:
    """Lines the compressed diary may take: half the prompt's diary lines, so the
    entries written after it always have room."""
    return max(max_lines // 2, 1)


def compression_due(entries: list[DiaryEntry], *, prompt_lines: int, compress_lines: int) -> bool:
    """The diary is compressed once it has more lines than the prompt carries
    (or than `compress_lines`, when that is lower), so no entry leaves the
    prompt for longer than one turn before it is folded in."""
    return diary_lines(entries) > min(prompt_lines, compress_lines)


def render_diary(entries: list[DiaryEntry]) -> str:
    """Entries as markdown: each entry's dated heading, then its lines."""
    return "\n".join(_render(entry, entry_lines(entry)) for entry in entries).strip()


DIARY_COMPRESSION_PROMPT = """Compress the following diary entries written by {name}. Merge related entries,
remove redundant information, but preserve:
1. Key relationship milestones
2. Emotional turning points
3. Promises and commitments
4. {name}'s evolving feelings
Keep {name}'s own voice (first person). Write short dated paragraphs or lines, at most {max_lines} lines.
Reply with the compressed diary only."""
DIARY_TEMPLATE = templates.register(
    "diary", DIARY_COMPRESSION_PROMPT, ("name", "max_lines"), "Compressing a long diary into a shorter one."
)


def diary_compression_request(name: str, entries: list[DiaryEntry], max_lines: int) -> list[ChatMessage]:
    diary = "\n".join(entry.as_markdown() for entry in entries)
    return [
        {"role": "system", "content": templates.get(DIARY_TEMPLATE.name).render(name=name, max_lines=max_lines)},
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
