"""What one arm of the check found on one scenario, and the figures made from it:
per category, and over the seeds of a scenario family (mean, spread, how many
questions)."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from omoide.check.scenario import CATEGORIES
from omoide.check.sources import SOURCES

KNOWABLE = "knowable"
"""The questions a memory can answer: every one but abstention and must-not-know
(those any answer that names nothing gets right, so they set a floor)."""
SAID_BY = "said by "
"""A group of questions by who told what they need: 'said by user' ..."""


def selects(answer: "Answer", group: str | None) -> bool:
    """`group`: a category, KNOWABLE, SAID_BY + a source, or None (all)."""
    if group is None:
        return True
    if group == KNOWABLE:
        return answer.knowable
    if group.startswith(SAID_BY):
        return answer.source == group.removeprefix(SAID_BY)
    return answer.category == group


@dataclass(frozen=True, slots=True)
class Turn:
    speaker: str
    phase: str
    """'plant', 'talk', 'pad', 'swipe', 'edit', 'question'."""
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
    question: str
    category: str
    asked: str
    speaker: str
    answer: str
    correct: bool
    """Strict containment (reader.score): the value, and nothing it must not name."""
    kept: bool | None
    """An ideal reader of the same prompt, less the model's own replies, answers
    right: the design kept it in reach (None for abstention)."""
    stale_named: bool = False
    """The answer named a value that was true once, as current."""
    judge: bool | None = None
    judge_said: str = ""
    knowable: bool = True
    """Not abstention nor must-not-know: a memory is needed to answer it."""
    source: str = ""
    """Who told what it needs: 'user', 'character', 'other', 'mixed' (check/sources.py)."""


@dataclass(frozen=True, slots=True)
class Horizon:
    fact: str
    messages: int
    """Messages after it was said during which every prompt still held it."""
    censored: bool
    """Still held at the end of the run: the horizon is at least `messages`."""


@dataclass(slots=True)
class ArmResult:
    arm: str
    about: str
    scenario: str = ""
    family: str = ""
    seed: int = 0
    oracle: str = ""
    """'reader', 'writer', or '' for a model."""
    answers: list[Answer] = field(default_factory=list)
    turns: list[Turn] = field(default_factory=list)
    horizons: list[Horizon] = field(default_factory=list)
    overflow_at: int | None = None
    """The first message count at which a prompt no longer fit the context."""
    error: str = ""
    floor: bool = False
    """A floor of the model's run (check/floors.py): a server that knows nothing."""

    def accuracy(self, category: str | None = None, *, kept: bool = False, judge: bool = False) -> float | None:
        chosen = [a for a in self.answers if selects(a, category)]
        values = [a.kept if kept else a.judge if judge else a.correct for a in chosen]
        marks = [v for v in values if v is not None]
        return sum(marks) / len(marks) if marks else None

    def stale_rate(self) -> float | None:
        chosen = [a for a in self.answers if a.category == "update"]
        return sum(a.stale_named for a in chosen) / len(chosen) if chosen else None

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

    def messages(self) -> int:
        return 2 * len(self.turns)

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
        used = [c for c in CATEGORIES if any(a.category == c for a in self.answers)]
        data["figures"] = {
            "accuracy": {c: self.accuracy(c) for c in used} | {"all": self.accuracy()},
            "kept": {c: self.accuracy(c, kept=True) for c in used} | {"all": self.accuracy(kept=True)},
            "judge": {c: self.accuracy(c, judge=True) for c in used} | {"all": self.accuracy(judge=True)},
            "accuracy_knowable": self.accuracy(KNOWABLE),
            "kept_by_source": {s: self.accuracy(SAID_BY + s, kept=True) for s in (*SOURCES, "mixed")
                               if any(a.source == s for a in self.answers)},
            "stale_named": self.stale_rate(),
            "prompt_tokens_per_turn": self.tokens_per_turn(),
            "prompt_token_source": self.token_source(),
            "reply_seconds_median": self.reply_seconds(),
            "memory_seconds_per_turn": self.memory_seconds(),
            "horizon_min": self.horizon(),
        }
        return data


@dataclass(frozen=True, slots=True)
class Cell:
    """One category of one arm over the scenarios of a run: the mean of each
    scenario's figure, its spread over them (standard deviation), the questions."""

    mean: float | None
    spread: float
    questions: int
    runs: int

    def show(self) -> str:
        if self.mean is None:
            return "–"
        text = f"{round(self.mean * 100)}"
        return f"{text}±{round(self.spread * 100)}" if self.runs > 1 and round(self.spread * 100) else text


def cell(results: Sequence[ArmResult], category: str | None, *, kept: bool = False, judge: bool = False) -> Cell:
    figures = [f for r in results if (f := r.accuracy(category, kept=kept, judge=judge)) is not None]
    asked = sum(1 for r in results for a in r.answers if selects(a, category))
    if not figures:
        return Cell(None, 0.0, asked, 0)
    return Cell(statistics.fmean(figures), statistics.pstdev(figures) if len(figures) > 1 else 0.0, asked, len(figures))
