"""What one arm of the check found, and the figures made from it."""

from __future__ import annotations

import statistics
from dataclasses import asdict, dataclass, field
from typing import Any

from omoide.check.script import CATEGORIES, Category


@dataclass(frozen=True, slots=True)
class Turn:
    speaker: str
    phase: str
    """'plant', 'pad', 'probe', 'scene'."""
    prompt_tokens: int
    token_source: str
    """'server' (the backend's usage), 'tokenizer' or 'estimate' (characters / 4)."""
    reply_seconds: float
    memory_seconds: float
    """Waiting for the memory work the turn started (summary, memos, diary, world)."""
    dropped: bool = False
    """The prompt did not fit the context: the oldest messages were left out."""


@dataclass(frozen=True, slots=True)
class Answer:
    probe: str
    category: Category
    question: str
    speaker: str
    answer: str
    correct: bool
    """The answer holds the expected words (script.Probe, reader.score)."""
    kept: bool | None
    """An ideal reader of the same prompt answers right: the design kept it in
    reach (None for abstention, where there is nothing to keep)."""
    judge: bool | None = None
    judge_said: str = ""


@dataclass(frozen=True, slots=True)
class Horizon:
    fact: str
    messages: int
    """Messages after it was said during which every prompt still held it."""
    censored: bool
    """Still held at the end of the run: the horizon is at least `messages`."""

    def show(self) -> str:
        return f"≥{self.messages}" if self.censored else str(self.messages)


@dataclass(slots=True)
class ArmResult:
    arm: str
    about: str
    answers: list[Answer] = field(default_factory=list)
    turns: list[Turn] = field(default_factory=list)
    horizons: list[Horizon] = field(default_factory=list)
    overflow_at: int | None = None
    """The first message count at which a prompt no longer fit the context."""
    error: str = ""

    def accuracy(self, category: Category | None = None, *, kept: bool = False, judge: bool = False) -> float | None:
        chosen = [a for a in self.answers if category is None or a.category == category]
        values = [a.kept if kept else a.judge if judge else a.correct for a in chosen]
        marks = [v for v in values if v is not None]
        return sum(marks) / len(marks) if marks else None

    def tokens_per_turn(self) -> float | None:
        figures = [t.prompt_tokens for t in self.turns]
        return statistics.fmean(figures) if figures else None

    def token_source(self) -> str:
        return ", ".join(sorted({t.token_source for t in self.turns})) or "none"

    def reply_seconds(self) -> float | None:
        figures = [t.reply_seconds for t in self.turns]
        return statistics.median(figures) if figures else None

    def memory_seconds(self) -> float | None:
        figures = [t.memory_seconds for t in self.turns]
        return statistics.fmean(figures) if figures else None

    def horizon(self) -> str:
        """How long a fact stays in every prompt: the shortest stay of a fact that
        left, or, when none left, at least the longest stay seen."""
        if not self.horizons:
            return "–"
        lost = [h.messages for h in self.horizons if not h.censored]
        if lost:
            return str(min(lost))
        return f"≥{max(h.messages for h in self.horizons)}"

    def as_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["figures"] = {
            "accuracy": {c: self.accuracy(c) for c in CATEGORIES} | {"all": self.accuracy()},
            "kept": {c: self.accuracy(c, kept=True) for c in CATEGORIES} | {"all": self.accuracy(kept=True)},
            "judge": {c: self.accuracy(c, judge=True) for c in CATEGORIES} | {"all": self.accuracy(judge=True)},
            "prompt_tokens_per_turn": self.tokens_per_turn(),
            "prompt_token_source": self.token_source(),
            "reply_seconds_median": self.reply_seconds(),
            "memory_seconds_per_turn": self.memory_seconds(),
            "horizon_min": self.horizon(),
        }
        return data
