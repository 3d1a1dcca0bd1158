"""The oracle: a scripted server whose memory work copies every planted fact
faithfully, and whose answers are the ideal reader's (reader.py).

Run against it, the check measures the design alone: a fact is found exactly
when the design brought it within reach of the prompt (its memory horizon),
whatever a model would make of it. Memory work (summary, memo, diary, world
steps) copies the lines of its material that hold a fact, word for word and
with their time stamps; it reads only its task (a request continuing the
chat's prompt is read from its last message), never the prompt around it.
Its chat replies are short and say nothing anyone asks back; it writes no
diary entries (what a model chooses to save is the model's part).
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Sequence
from typing import Any

from omoide.check.reader import read
from omoide.check.script import FACTS, FILLER_REPLY, PROBES, TOLD
from omoide.llm.base import ChatMessage, Done, Event, TextDelta, TokenCount, ToolSpec, estimate_tokens, is_memory_task
from omoide.llm.stamps import split_stamp

EVIDENCE = tuple(dict.fromkeys([*(f.evidence for f in FACTS), *(w for p in PROBES for w in p.refuse)]))
_INLINE_RECALL = "<recall>"
_RECALLED = "(What comes back to you"

WORLD_STEPS = (
    ("offscreen_goal", "If that goal still matters more"),
    ("offscreen", "second-hand in this conversation"),
    ("summary", "Summarize this conversation from"),
    ("memory", "Rewrite, from scratch, what"),
    ("goal", "goal for the next conversation with"),
    ("descriptor", "In one to three words"),
    ("global", "own memories, beliefs and goals"),
)


def _kind(messages: Sequence[ChatMessage]) -> tuple[str, str]:
    """(what the request is, the text of its task)."""
    last = str(messages[-1].get("content", ""))
    if is_memory_task(messages[-1]) or "speakers" not in messages[0]:
        task = last if is_memory_task(messages[-1]) else "\n".join(str(m.get("content", "")) for m in messages)
        for step, marker in WORLD_STEPS:
            if marker in task:
                return f"world.{step}", task
        if "Journey Highlights" in task:
            return "memo", task
        if "Compress the following diary" in task:
            return "diary", task
        if "summary" in task.casefold() or "Summarize" in task:
            return "summary", task
        return "other", task
    return "chat", last


def _material(task: str, heading: str) -> str:
    """The part of a task after its material's heading ("Conversation:" ...)."""
    at = task.rfind(f"{heading}:\n")
    return task[at + len(heading) + 2:] if at >= 0 else task


_THIRD_PERSON = ((r"\bI'm\b", "he's"), (r"\bI've\b", "he's"), (r"\bI'll\b", "he'll"), (r"\bI\b", "he"),
                 (r"\bmy\b", "his"), (r"\bMy\b", "His"), (r"\bme\b", "him"))


def fact_lines(text: str) -> list[str]:
    """Every line of `text` that holds a fact, once, as it stands (stamps kept),
    told in the third person ("Kai said: his cat is called Biscuit"), as a
    summary is written."""
    out: list[str] = []
    for raw in text.splitlines():
        line = raw.strip().lstrip("-•").strip()
        if not any(word in line.casefold() for word in EVIDENCE):
            continue
        stamp, rest = split_stamp(line)
        rest = re.sub(r"^(\w[\w ]{0,30}): ", r"\1 said: ", rest, count=1)
        for first, third in _THIRD_PERSON:
            rest = re.sub(first, third, rest)
        line = f"{stamp} {rest}".strip()
        if line not in out:
            out.append(line)
    return out


def answer_memory(kind: str, task: str) -> str:
    """Memory work: the facts of the material, copied."""
    if kind == "memo":
        lines = fact_lines(_material(task, "Messages"))
        if not lines:
            return "【Highlight 1】: They talked about ordinary things, the weather and the trains."
        return "\n".join(f"【Highlight {i}】: {line}" for i, line in enumerate(lines, 1))
    if kind == "summary":  # a rewrite keeps the facts of the summary it folds in; a new part adds its own
        folded = task.find("Previous summary:\n")
        previous = task[folded: task.rfind("Conversation:\n")] if folded >= 0 else ""
        lines = [*fact_lines(previous), *fact_lines(_material(task, "Conversation"))]
        return " ".join(["They talked about ordinary things, and she listened.", *dict.fromkeys(lines)])
    if kind == "diary":
        return "\n".join(["Kept from the diary:", *fact_lines(_material(task, "Diary"))])
    step = kind.removeprefix("world.")
    fixed = {"goal": "Ask how the week went.", "descriptor": "Friend.", "offscreen_goal": "KEEP"}
    if step in fixed:
        return fixed[step]
    lines = fact_lines(task)
    if step == "offscreen":
        return " ".join(lines) if lines else "NOTHING"
    return " ".join(["They remember the evening together.", *lines])


def answer_chat(messages: Sequence[ChatMessage], recall_offered: bool) -> str:
    """A chat turn: the ideal reader's answer to a question of the script, or a
    line that says nothing anyone asks back."""
    question = next((str(m.get("content", "")) for m in reversed(messages) if m["role"] == "user"), "")
    probe = next((p for p in PROBES if p.question in question), None)
    text = "\n".join(str(m.get("content", "")) for m in messages)
    if probe is None:
        return FILLER_REPLY
    answer = read(probe, text)
    searched = str(messages[-1].get("content", "")).startswith(_RECALLED)
    if recall_offered and not searched and probe.recall and answer.startswith(("I don't", "I can't")):
        return f"Let me think. {_INLINE_RECALL}{probe.recall}</recall>"
    return answer


class OracleBackend:
    """A Backend (llm/base.py) that needs no model."""

    name = "oracle"
    model = "oracle"
    supports_tools = False

    def __init__(self) -> None:
        self.requests = 0

    async def stream(
        self,
        messages: list[ChatMessage],
        *,
        tools: list[ToolSpec] | None = None,
        tool_choice: str | dict[str, Any] | None = None,
        max_tokens: int | None = None,
        cache_key: str | None = None,
    ) -> AsyncIterator[Event]:
        self.requests += 1
        kind, task = _kind(messages)
        if kind == "chat":
            offered = _INLINE_RECALL in str(messages[0].get("content", ""))
            text = answer_chat(messages, offered)
        else:
            text = answer_memory(kind, task)
        yield TextDelta(text)
        yield Done("stop")

    async def count_tokens(self, messages: list[ChatMessage]) -> TokenCount:
        return estimate_tokens(messages)

    async def check(self) -> str:
        return "the memory check's oracle (no model)"

    async def aclose(self) -> None:
        return None


__all__ = ["OracleBackend", "TOLD", "answer_chat", "answer_memory", "fact_lines"]
