"""The floors of a model's run: scripted servers that know nothing, run on the
same scenarios in the same run, so a model's answered figure reads against
what knowing nothing scores.

- `declines` answers every question "I don't know": right on every abstention
  and must-not-know question, and on nothing a memory is needed for.
- `frequent` answers every question with the story's most frequent name (a
  capitalised word not opening a sentence, neither the user's nor the host's
  name): what a guesser who read nothing but the story's surface scores.

They play the window arm (no memory work: what they answer does not read the
prompt, so no other arm would change it)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import AsyncIterator
from typing import Any, Literal

from omoide.check.reader import DONT_KNOW
from omoide.check.scenario import Scenario
from omoide.llm.base import ChatMessage, Done, Event, TextDelta, TokenCount, ToolSpec, estimate_tokens

Floor = Literal["declines", "frequent"]
FLOORS: tuple[Floor, ...] = ("declines", "frequent")
FLOOR_ARM = "window"
ABOUT = {"declines": "floor: answers every question \"I don't know\"",
         "frequent": "floor: answers every question with the story's most frequent name"}


def lines(scenario: Scenario) -> list[str]:
    out = []
    for event in scenario.events:
        if event.kind == "user" and isinstance(event.value, str):
            out += [event.value, event.reply]
    return [*out, *scenario.padding]


def most_frequent_name(scenario: Scenario) -> str:
    """The capitalised word said most often inside a sentence (not opening one),
    the speakers' own names left out."""
    skip = {scenario.user.casefold(), scenario.host.casefold(), "i"}
    counts: Counter[str] = Counter()
    for line in lines(scenario):
        for sentence in re.split(r"(?<=[.!?…])\s+|\n", line):
            words = re.findall(r"[\w'’]+", sentence)
            counts.update(w.removesuffix("'s").removesuffix("’s") for w in words[1:]
                          if w[:1].isupper() and w[1:].islower() and w.casefold() not in skip)
    return counts.most_common(1)[0][0] if counts else "Nobody"


class FloorBackend:
    """A Backend (llm/base.py) that answers every request the same way."""

    supports_tools = False

    def __init__(self, kind: Floor) -> None:
        self.floor: Floor = kind
        self.name = f"floor ({kind})"
        self.model: str = kind
        self.reply = DONT_KNOW

    def study(self, scenario: Scenario) -> None:
        self.reply = DONT_KNOW if self.floor == "declines" else f"It's {most_frequent_name(scenario)}."

    async def stream(
        self,
        messages: list[ChatMessage],
        *,
        tools: list[ToolSpec] | None = None,
        tool_choice: str | dict[str, Any] | None = None,
        max_tokens: int | None = None,
        cache_key: str | None = None,
    ) -> AsyncIterator[Event]:
        yield TextDelta(self.reply)
        yield Done("stop")

    async def count_tokens(self, messages: list[ChatMessage]) -> TokenCount:
        return estimate_tokens(messages)

    async def check(self) -> str:
        return f"the memory check's {self.floor} floor (no model)"

    async def aclose(self) -> None:
        return None
