"""Tier 3: the diary the character writes with the save_memory tool."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from omoide.domain import DiaryEntry
from omoide.llm.base import ChatMessage, ToolSpec

NATIVE_INSTRUCTIONS = (
    "You keep a private diary. When something significant happens (an emotional moment, "
    "a promise, a plan, a secret), call the save_memory tool with a short entry in your own "
    "voice, then carry on with your reply. Never mention the diary to the user."
)

INLINE_INSTRUCTIONS = (
    "You keep a private diary. When something significant happens (an emotional moment, "
    "a promise, a plan, a secret), write a short entry in your own voice between "
    "<save_memory> and </save_memory> anywhere in your reply. The user never sees it."
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
        "properties": {"content": {"type": "string", "description": "The diary entry, in your own words."}},
        "required": ["content"],
    },
    native_instructions=NATIVE_INSTRUCTIONS,
    inline_instructions=INLINE_INSTRUCTIONS,
)

OPEN_TAG = "<save_memory>"
CLOSE_TAG = "</save_memory>"


@dataclass
class InlineMemoryFilter:
    """Takes <save_memory>...</save_memory> out of a streamed reply.

    Text that might be the start of a tag is held back until it is clear, so
    the user never sees a tag flicker on screen.
    """

    _pending: str = ""
    _inside: bool = False
    _entry: list[str] = field(default_factory=list)

    def feed(self, text: str) -> tuple[str, list[str]]:
        visible: list[str] = []
        entries: list[str] = []
        data = self._pending + text
        self._pending = ""
        while data:
            if self._inside:
                end = data.find(CLOSE_TAG)
                if end == -1:
                    keep = _partial_suffix(data, CLOSE_TAG)
                    self._entry.append(data[: len(data) - keep])
                    self._pending = data[len(data) - keep :]
                    return "".join(visible), [e for e in entries if e]
                self._entry.append(data[:end])
                entries.append("".join(self._entry).strip())
                self._entry = []
                self._inside = False
                data = data[end + len(CLOSE_TAG) :]
            else:
                start = data.find(OPEN_TAG)
                if start == -1:
                    keep = _partial_suffix(data, OPEN_TAG)
                    visible.append(data[: len(data) - keep])
                    self._pending = data[len(data) - keep :]
                    return "".join(visible), [e for e in entries if e]
                visible.append(data[:start])
                self._inside = True
                data = data[start + len(OPEN_TAG) :]
        return "".join(visible), [e for e in entries if e]

    def flush(self) -> tuple[str, list[str]]:
        """End of stream: an unclosed tag still counts as an entry."""
        pending, self._pending = self._pending, ""
        if self._inside:
            self._inside = False
            entry = ("".join(self._entry) + pending).strip()
            self._entry = []
            return "", [entry] if entry else []
        return pending, []


def _partial_suffix(data: str, tag: str) -> int:
    """Length of the longest suffix of `data` that is a proper prefix of `tag`."""
    for size in range(min(len(tag) - 1, len(data)), 0, -1):
        if tag.startswith(data[-size:]):
            return size
    return 0


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
