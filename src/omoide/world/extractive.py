"""The end-of-conversation steps in the story's own words, with no model call
(memory_writer 'extract', 'auto' on the embedded models, whose memories invent
what nobody said): the sentences with names, numbers, dates and places, told
as said, chosen by the extractive writer (memory/extract.py).

What they keep: the conversation's summary (from the transcript the step
reads), a character's memory of someone (from what it remembered before and
their conversations and what it heard), and what it heard of someone absent
(the transcript's sentences that name them). Goals, descriptors and the world
as a whole are a model's judgement: these leave them as they were.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from omoide.memory.extract import Rarity, extract, nothing_telling, reported
from omoide.memory.own_words import CHARS_PER_TOKEN
from omoide.world.steps import NONE_YET


def _lines(value: object) -> list[str]:
    lines = (line.strip() for line in str(value or "").splitlines())
    return [line.removeprefix("- ").strip() for line in lines if line and line != NONE_YET]


def _names(line: str, name: str) -> bool:
    return any(re.search(rf"(?<!\w){re.escape(word)}(?!\w)", line, re.IGNORECASE) for word in name.split() if word)


def own_words_lines(step: str, values: Mapping[str, object]) -> list[str] | None:
    """The lines `step` chooses from, or None for a step that is a judgement."""
    match step:
        case "summary":
            return _lines(values.get("transcript"))
        case "memory":
            return [*_lines(values.get("previous_memory")), *_lines(values.get("summaries")), *_lines(values.get("offscreen"))]
        case "offscreen":
            return [line for line in _lines(values.get("transcript")) if _names(line, str(values.get("other", "")))]
    return None


def own_words(step: str, values: Mapping[str, object], *, user: str, max_tokens: int,
              rare: Rarity | None = None) -> str | None:
    """What `step` keeps of `values` (the step's template values) in the story's
    own words, within `max_tokens`; None: the step keeps nothing new."""
    lines = own_words_lines(step, values)
    if lines is None:
        return None
    char = str(values.get("char", ""))
    kept = extract(lines, user=user, character=char, budget_chars=CHARS_PER_TOKEN * max_tokens, rare=rare)
    if not kept and step == "summary":
        return nothing_telling(char, str(values.get("others", "no one")))
    return " ".join(reported(line) for line in kept) or None
