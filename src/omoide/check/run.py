"""One run of the check over the arms asked for: the figures, and what they
were measured on (the backend, the machine's load while it ran)."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from omoide.check.arms import ARMS, Arm
from omoide.check.judge import JUDGE_PROMPT, judge_all
from omoide.check.results import ArmResult
from omoide.check.runner import Advance, ArmRun, default_padding, planned_turns
from omoide.config.settings import Settings
from omoide.llm.base import Backend


def load_average() -> tuple[float, float, float] | None:
    try:
        return os.getloadavg()
    except OSError:  # not every platform has one
        return None


@dataclass(slots=True)
class CheckReport:
    backend: str
    model: str
    oracle: bool
    padding: int
    context_size: int
    started: str
    cpus: int
    load_before: tuple[float, float, float] | None
    load_after: tuple[float, float, float] | None = None
    arms: list[ArmResult] = field(default_factory=list)
    judged: bool = False

    def as_json(self) -> dict[str, Any]:
        return {
            "backend": self.backend, "model": self.model, "oracle": self.oracle, "padding": self.padding,
            "context_size": self.context_size, "started": self.started, "cpus": self.cpus,
            "load_average_before": self.load_before, "load_average_after": self.load_after,
            "judge_prompt": JUDGE_PROMPT if self.judged else None,
            "arms": [a.as_json() for a in self.arms],
        }


def total_turns(arms: Sequence[Arm], padding: int) -> int:
    return len(arms) * planned_turns(padding)


async def run_check(
    settings: Settings, backend: Backend, *, arms: Sequence[Arm] = ARMS, padding: int | None = None,
    summarizer: Backend | None = None, judge: Backend | None = None, oracle: bool = False,
    advance: Advance = lambda n: None, on_arm: Callable[[Arm], None] = lambda arm: None,
) -> CheckReport:
    """Every arm in turn (one at a time: their timings must not share the machine)."""
    padding = padding if padding is not None else default_padding(settings)
    report = CheckReport(
        backend=getattr(backend, "name", "?"), model=getattr(backend, "model", "") or "", oracle=oracle, padding=padding,
        context_size=settings.backend.context_size, started=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        cpus=os.cpu_count() or 1, load_before=load_average(),
    )
    for arm in arms:
        on_arm(arm)
        run = ArmRun(arm, settings, backend, summarizer=summarizer, padding=padding, advance=advance)
        report.arms.append(await run.run())
    report.load_after = load_average()
    if judge is not None:
        await judge_all(judge, report.arms)
        report.judged = True
    return report
