"""The oracles: scripted servers that need no model, so the check measures the
design alone.

Both answer a question the way the ideal reader of the prompt would
(reader.py): a fact is found exactly when the design brought it within reach.
They differ in their memory work (summary, memo, diary compression, world
steps), which reads only its task, never the chat prompt a request continues:

- the **reader** oracle knows the answer key: it copies, word for word and with
  their stamps, every sentence of its material that tells a fact of the
  scenario (or a word a character must not know), as many as the request's
  limit holds (when it holds fewer: one for each fact still true first, then
  the newest). It measures whether a layer that holds a fact reaches the
  prompt: an upper bound.
- the **writer** oracle does not: it keeps what the extractive writer
  (memory/extract.py) picks, the sentences that tell lasting facts about
  someone (names, people, likes, promises, corrections, what was done
  together) before passing detail, within the limit the request gives; a
  rewrite chooses from the summary it folds in and the new messages alike. It
  measures what the design keeps when its writer must choose.

Their chat replies are short and name nothing anyone asks back; they write no
diary entries (what a model chooses to save is the model's part).
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Sequence
from typing import Any, Literal

from omoide.check.reader import Reader, facts_told, names, statements
from omoide.check.scenario import Scenario
from omoide.llm.base import ChatMessage, Done, Event, TextDelta, TokenCount, ToolSpec, estimate_tokens, is_memory_task
from omoide.memory.extract import extract, material_lines, reported, sentence_lines

Kind = Literal["reader", "writer"]
FILLER_REPLY = "Mm. *She nods and wipes the counter.*"
_INLINE_RECALL = "<recall>"
_RECALLED = "(What comes back to you"
_STOP = frozenset(
    "a an the and or but of to in on at for with by from about as is are was were be been do does did done what which who "
    "whom whose when where why how i me my you your we our us it its he she they them his her this that these those "
    "there here have has had not no yes can could would should will shall may might must tell told say said".split())

WORLD_STEPS = (
    ("offscreen_goal", "If that goal still matters more"),
    ("offscreen", "second-hand in this conversation"),
    ("summary", "Summarize this conversation from"),
    ("memory", "Rewrite, from scratch, what"),
    ("goal", "goal for the next conversation with"),
    ("descriptor", "In one to three words"),
    ("global", "own memories, beliefs and goals"),
)


def task_kind(messages: Sequence[ChatMessage]) -> tuple[str, str]:
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


def world_material(task: str) -> list[str]:
    """The lines an end-of-conversation step is about: from its first heading
    ("The conversation:", "What Suzune remembered before:") to its closing
    instructions. What comes before (who and what, the card's description, a
    continued chat's note that the story pauses) is no part of the story."""
    paragraphs = task.strip().split("\n\n")
    start = next((i for i, p in enumerate(paragraphs) if (p.splitlines() or [""])[0].rstrip().endswith(":")), len(paragraphs) - 1)
    return "\n\n".join(paragraphs[start:-1]).splitlines()


def recall_query(question: str) -> str:
    """What the oracle searches for: the question's own content words (which, in a
    good scenario, are not the fact's)."""
    words = [w for w in re.findall(r"[\w']+", question.casefold()) if w not in _STOP and len(w) > 2]
    return " ".join(words[:6])


class Oracle:
    """The memory work and answers of one oracle over one scenario."""

    def __init__(self, kind: Kind, scenario: Scenario) -> None:
        self.kind = kind
        self.scenario = scenario
        self._told: dict[str, tuple[int, frozenset[str]]] = {}
        """Lines already judged: memory work sees the same lines again and again
        (a summary folds in the last one, memos overlap their material)."""
        outdated = {f.supersedes for f in scenario.facts.values() if f.supersedes}
        self._current = {f.id for f in scenario.facts.values() if f.id not in outdated}

    def telling(self, line: str) -> bool:
        """The line tells a fact of the scenario, or a word someone must not know."""
        return self._judged(line)[0] > 0

    def _judged(self, line: str) -> tuple[int, frozenset[str]]:
        """(2: the line tells a fact still true, 1: an outdated one or a word
        someone must not know, 0: nothing of the scenario; the facts it tells)."""
        told = self._told.get(line)
        if told is None:
            told = self._told[line] = self._tells(line)
        return told

    def _tells(self, line: str) -> tuple[int, frozenset[str]]:
        facts = facts_told(line, self.scenario.facts.values())
        if facts & self._current:
            return 2, facts
        folded = line.casefold()
        words = [w for q in self.scenario.questions.values() for w in q.refuse if w in folded]
        refused = bool(words) and any(names(s.text, w) for s in statements(line, None) for w in words)
        return (1 if facts or refused else 0), facts

    def keep(self, lines: Sequence[str], budget_chars: int) -> list[str]:
        if self.kind == "reader":
            # Every telling line, as many as its limit holds: first one line for each fact still true (the newest),
            # then the rest, newest first; in the order said.
            told = [line for line in dict.fromkeys(sentence_lines(lines)) if self.telling(line)]
            covered: set[str] = set()
            first = []
            for n in reversed(range(len(told))):
                weight, facts = self._judged(told[n])
                if weight == 2 and facts - covered:
                    first.append(n)
                    covered |= facts
            rest = sorted(set(range(len(told))) - set(first), key=lambda n: (-self._judged(told[n])[0], -n))
            written = [reported(line) for line in told]
            chosen: set[int] = set()
            used = 0
            for n in [*first, *rest]:
                if used + len(written[n]) <= budget_chars:
                    chosen.add(n)
                    used += len(written[n])
            return [written[n] for n in sorted(chosen)]
        host = self.scenario.host.capitalize()
        return [reported(line) for line in extract(lines, user=self.scenario.user, character=host, budget_chars=budget_chars)]

    def memory(self, kind: str, task: str, max_tokens: int | None) -> str:
        budget = 4 * (max_tokens or 400)
        if kind == "memo":
            lines = self.keep(material_lines(task, "Messages"), budget)[:3]  # as fallback_highlights
            if not lines:
                return "【Highlight 1】: They talked about ordinary things, the weather and the trains."
            return "\n".join(f"【Highlight {i}】: {line}" for i, line in enumerate(lines, 1))
        if kind == "summary":  # a rewrite chooses from what it folds in and the new messages alike, within its limit
            folded = task.find("Previous summary:\n")
            previous = task[folded: task.rfind("Conversation:\n")] if folded >= 0 else ""
            old = [line for line in previous.splitlines()[1:] if line.strip()]
            lines = self.keep([*old, *material_lines(task, "Conversation")], budget)
            return " ".join(["They talked about ordinary things, and she listened.", *dict.fromkeys(lines)])
        if kind == "diary":
            return "\n".join(["Kept from the diary:", *self.keep(material_lines(task, "Diary"), budget)])
        step = kind.removeprefix("world.")
        fixed = {"goal": "Ask how the week went.", "descriptor": "Friend.", "offscreen_goal": "KEEP"}
        if step in fixed:
            return fixed[step]
        lines = self.keep(world_material(task), budget)
        if step == "offscreen":
            return " ".join(lines) if lines else "NOTHING"
        return " ".join(["They remember the evening together.", *lines])

    def chat(self, messages: Sequence[ChatMessage], recall_offered: bool) -> str:
        """The ideal reader's answer to a question of the scenario, or a line that
        names nothing anyone asks back."""
        asked = next((str(m.get("content", "")) for m in reversed(messages) if m["role"] == "user"), "")
        question = next((q for q in self.scenario.questions.values() if q.ask in asked), None)
        if question is None:
            return FILLER_REPLY
        text = "\n".join(str(m.get("content", "")) for m in messages)
        reading = Reader(text, self.scenario).read(question)
        searched = str(messages[-1].get("content", "")).startswith(_RECALLED)
        if recall_offered and not searched and reading.right is False and not question.refuse:
            return f"Let me think. {_INLINE_RECALL}{recall_query(question.ask)}</recall>"
        return reading.said


class OracleBackend:
    """A Backend (llm/base.py) that needs no model; `study` gives it the
    scenario about to be played."""

    supports_tools = False

    def __init__(self, kind: Kind = "reader") -> None:
        self.kind: Kind = kind
        self.name = f"oracle ({kind})"
        self.model = f"{kind} oracle"
        self.requests = 0
        self.oracle: Oracle | None = None

    def study(self, scenario: Scenario) -> None:
        self.oracle = Oracle(self.kind, scenario)

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
        assert self.oracle is not None, "study(scenario) first"
        kind, task = task_kind(messages)
        if kind == "chat":
            offered = _INLINE_RECALL in str(messages[0].get("content", ""))
            text = self.oracle.chat(messages, offered)
        else:
            text = self.oracle.memory(kind, task, max_tokens)
        yield TextDelta(text)
        yield Done("stop")

    async def count_tokens(self, messages: list[ChatMessage]) -> TokenCount:
        return estimate_tokens(messages)

    async def check(self) -> str:
        return f"the memory check's {self.kind} oracle (no model)"

    async def aclose(self) -> None:
        return None
