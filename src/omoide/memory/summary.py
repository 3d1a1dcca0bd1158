"""Tier 2: compressing older messages into a running summary."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import tzinfo

from omoide.memory import templates
from omoide.domain.chat import Message, Role
from omoide.llm.base import ChatMessage
from omoide.llm.stamps import stamp
from omoide.memory.window import speaker_label

SUMMARY_PROMPT = """Summarize the following conversation between {name} and {user}. Focus on:
1. Key events and decisions
2. Emotional moments and shifts in mood
3. Promises, plans, or commitments made
4. Relationship dynamics (who initiated what)
Write in third person, past tense, as a flowing narrative.
Preserve emotional nuance: don't just list what happened, capture HOW it felt.
If a previous summary is given, fold it in: the result must cover the whole story so far,
and keep its dates in [brackets]: say when each thing happened.
Reply with the summary only."""
SUMMARY_TEMPLATE = templates.register(
    "summary", SUMMARY_PROMPT, ("name", "user"), "Compressing older messages of a chat into its running summary."
)


SEGMENT_PROMPT = """Continue the running summary of the story between {name} and {user}.
The summary so far is given for context only: do not repeat it or rewrite it.
Summarize only the conversation below, as the next part of the summary. Focus on:
1. Key events and decisions
2. Emotional moments and shifts in mood
3. Promises, plans, or commitments made
4. Relationship dynamics (who initiated what)
Write in third person, past tense, one or two short paragraphs.
Reply with the new part of the summary only."""
SEGMENT_TEMPLATE = templates.register(
    "summary_segment", SEGMENT_PROMPT, ("name", "user"),
    "The next part of a chat's running summary (appended; the earlier text stays as it is).",
)


SUMMARY_MAX_TOKENS = 700
MIN_PART = 6
"""The fewest messages a summary part folds in when the window leaves room for more."""
SEGMENT_MIN_TOKENS = 128
"""The least room a summary's next part gets, however short its messages."""
DATE_SPAN = re.compile(r"^\[\d{2}/\d{2} \d{2}:\d{2}(?: – \d{2}/\d{2} \d{2}:\d{2})?\] ")
"""The dates a summary paragraph opens with (`dated`)."""
_STAMP_TIME = re.compile(r"\d{2}/\d{2} \d{2}:\d{2}")


class InvalidSummary(ValueError):
    """The model's output is not a usable summary."""


def split_for_compression(window: list[Message], *, threshold: int, keep_recent: int) -> list[Message]:
    """The messages to compress: once the uncovered window exceeds `threshold`,
    the oldest of them, as many as a chat that compresses after every reply
    folds in at a time (`threshold` + 1 - `keep_recent`, at least `MIN_PART`),
    never more than leave the last `keep_recent`. Lines stored with no reply
    between them (an imported chat, a pasted block) are caught up part by part
    at that cadence, never in one part for all of them. Empty when no
    compression is due."""
    if len(window) <= threshold:
        return []
    part = max(threshold + 1 - keep_recent, MIN_PART)
    return window[: min(part, len(window) - keep_recent)]


def summary_request(name: str, user: str, previous: str | None, chunk: list[Message],
                    names: Mapping[str, str] | None = None) -> list[ChatMessage]:
    """Fold `chunk` and the previous summary into one new summary."""
    return _request(SUMMARY_TEMPLATE.name, name, user, previous, chunk, "Previous summary", names)


def segment_request(name: str, user: str, previous: str | None, chunk: list[Message],
                    names: Mapping[str, str] | None = None) -> list[ChatMessage]:
    """Summarize `chunk` alone, as the part that follows `previous`."""
    return _request(SEGMENT_TEMPLATE.name, name, user, previous, chunk, "The summary so far", names)


def dated(text: str, chunk: Sequence[Message], tz: tzinfo | None = None) -> str:
    """A summary paragraph opening with when what it tells happened, in the
    messages' own stamps (`[04/01 22:15 – 04/03 09:10]`): fixed when it is
    written, so a character can say "three days ago" against the prompt's
    date, and the text stays byte for byte in every later prompt."""
    said = [m for m in chunk if m.role in (Role.USER, Role.ASSISTANT)] or list(chunk)
    if not said or DATE_SPAN.match(text):
        return text
    start, end = stamp(said[0].created_at, tz), stamp(said[-1].created_at, tz)
    span = start if start == end else f"{start[:-1]} – {end[1:]}"
    return f"{span} {text.strip()}"


def segment_tokens(chunk: Sequence[Message]) -> int:
    """Tokens the next part of a running summary may take: about as many as the
    messages it folds in (at least SEGMENT_MIN_TOKENS, at most
    SUMMARY_MAX_TOKENS). A summary longer than what it summarizes only costs:
    a tiny model wrote 300-450 tokens for six messages of one line each, and
    every speaker of a scene reads each part before its recent messages again."""
    said = sum(len(m.content) for m in chunk) // 4 + 1
    return max(SEGMENT_MIN_TOKENS, min(said, SUMMARY_MAX_TOKENS))


_SENTENCE_END = re.compile(r"[.!?…][\"'”’)*_\]]*(?=\s|$)")


def whole_sentences(text: str) -> str:
    """`text` up to the end of its last whole sentence: a part cut off by its
    token limit ends where a sentence did, not in the middle of one."""
    text = text.rstrip()
    ends = [m.end() for m in _SENTENCE_END.finditer(text)]
    if not ends or ends[-1] == len(text):
        return text
    return text[: ends[-1]]


def append_segment(summary: str, segment: str) -> str:
    """The running summary with `segment` after it; the earlier text is kept byte for byte."""
    return f"{summary.rstrip()}\n\n{segment.strip()}" if summary.strip() else segment.strip()


@dataclass(frozen=True, slots=True)
class Compression:
    """How one compression writes, decided from the summary so far (`summary`):
    a part appended after it while it is shorter than summary_merge_chars (the
    text already in every prompt stays byte for byte, so prompt caches keep
    it), else the whole: the first summary, or a rewrite folding it all in."""

    summary: str
    append: bool
    rewrite_tokens: int = SUMMARY_MAX_TOKENS
    """What a rewrite may take: more in a larger context (`MemorySettings.rewrite_tokens`)."""

    @classmethod
    def of(cls, summary: str | None, merge_chars: int, rewrite_tokens: int = SUMMARY_MAX_TOKENS) -> Compression:
        summary = summary or ""
        return cls(summary, bool(summary.strip()) and len(summary.strip()) < merge_chars, rewrite_tokens)

    @property
    def previous(self) -> str | None:
        return self.summary.strip() or None

    @property
    def rewrite(self) -> bool:
        return self.previous is not None and not self.append

    def request(self, name: str, user: str, chunk: list[Message], names: Mapping[str, str] | None = None) -> list[ChatMessage]:
        build = segment_request if self.append else summary_request
        return build(name, user, self.previous, chunk, names)

    def max_tokens(self, chunk: Sequence[Message]) -> int:
        """The first summary and each part about as many as their messages
        (`segment_tokens`); a rewrite SUMMARY_MAX_TOKENS. (With the whole 700 as
        its limit, SmolLM2 wrote 1,702 characters as a first summary of six
        one-line messages, bringing nearer the rewrite at summary_merge_chars,
        which every speaker of a scene reads again whole.)"""
        return self.rewrite_tokens if self.rewrite else segment_tokens(chunk)

    def kept(self, written: str) -> str:
        """What was written, cut back to its last whole sentence (its limit may
        stop it mid-way), but for a rewrite, as written."""
        return written if self.rewrite else whole_sentences(written)

    def dated(self, answer: str, chunk: Sequence[Message], tz: tzinfo | None = None) -> str:
        """`answer` opening with when what it tells happened: a part, its messages'
        span; a rewrite, from the first date of the summary it folds in to its
        last message (dated by its chunk alone, a rewrite of a month said it all
        happened last night)."""
        if not self.rewrite:
            return dated(answer, chunk, tz)
        own = dated(DATE_SPAN.sub("", answer.strip()), chunk, tz)
        first, now = _STAMP_TIME.search(self.summary), DATE_SPAN.match(own)
        if first is None or now is None:
            return own
        end = _STAMP_TIME.findall(now.group())[-1]
        span = f"[{first.group()}]" if first.group() == end else f"[{first.group()} – {end}]"
        return f"{span} {own[now.end():]}"

    def text(self, answer: str) -> str:
        """The summary after this compression."""
        return append_segment(self.summary, answer) if self.append else answer


def quoted(chunk: Sequence[Message], name: str, user: str, names: Mapping[str, str] | None = None) -> list[str]:
    """The messages as a memory task quotes them: `[04/01 22:15] Kai: ...`, each on
    one line, so every paragraph of a reply keeps its date and who said it."""
    return [f"{stamp(m.created_at)} {speaker_label(m, name, user, names)}: {' '.join(m.content.split())}" for m in chunk]


def instructions_of(request: Sequence[ChatMessage]) -> str:
    """What a memory request tells the model to do, less the messages it quotes:
    its own system message (when it stands alone) and its task up to the material."""
    task = str(request[-1].get("content", "")) if request else ""
    for heading in ("Conversation:\n", "Messages:\n", "Diary:\n", "Previous summary:\n", "The summary so far:\n"):
        if heading in task:  # a rewrite may repeat the summary it folds in: that is no echo
            task = task[: task.index(heading)]
    told = [task]
    if len(request) == 2 and request[0]["role"] == "system":
        told.insert(0, str(request[0].get("content", "")))
    return "\n".join(told)


def _request(template: str, name: str, user: str, previous: str | None, chunk: list[Message], label: str,
             names: Mapping[str, str] | None) -> list[ChatMessage]:
    lines = quoted(chunk, name, user, names)
    parts = []
    if previous:
        parts.append(f"{label}:\n{previous.strip()}\n")
    parts.append("Conversation:\n" + "\n".join(lines))
    parts.append("\nSummary:")
    return [
        {"role": "system", "content": templates.get(template).render(name=name, user=user)},
        {"role": "user", "content": "\n".join(parts)},
    ]


_TEMPLATE_TOKENS = re.compile(r"<\|im_(start|end)\|>|<\|eot_id\|>|</?s>")
_GREETING = re.compile(r"^(hi|hello|hey|oh|ah|um+|well|sure|okay|ok)\b[,!. ]", re.IGNORECASE)
_FIRST_PERSON = re.compile(r"\b(I|I'm|I've|me|my)\b")
_THIRD_PERSON = re.compile(r"\b(he|she|they|his|her|their|him|them)\b", re.IGNORECASE)


def validate_summary(text: str, *, name: str, user: str) -> str:
    """Reject output that is obviously a chat reply rather than a summary."""
    summary = _TEMPLATE_TOKENS.sub("", text).strip()
    summary = re.sub(r"^(summary|recent conversation summary)\s*:\s*", "", summary, flags=re.IGNORECASE)
    if len(summary) < 40:
        raise InvalidSummary("the summary came back empty or too short")
    if summary.startswith(("*", '"', "“", "「")):
        raise InvalidSummary("the model wrote a roleplay reply instead of a summary")
    if re.match(rf"^\s*(\[[^\]]*\]\s*)?({re.escape(name)}|{re.escape(user)}|assistant|user)\s*:", summary, re.IGNORECASE):
        raise InvalidSummary("the model continued the dialogue instead of summarizing")
    if _GREETING.match(summary):
        raise InvalidSummary("the model answered the chat instead of summarizing")
    first, third = len(_FIRST_PERSON.findall(summary)), len(_THIRD_PERSON.findall(summary)) + summary.count(name)
    if first > 3 and first > 2 * third:
        raise InvalidSummary("the model wrote in the first person, like a chat reply")
    return summary


def validate_diary(text: str) -> str:
    diary = _TEMPLATE_TOKENS.sub("", text).strip()
    if len(diary) < 20:
        raise InvalidSummary("the compressed diary came back empty or too short")
    return diary
