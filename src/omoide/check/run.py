"""One run of the check: the scenarios asked for, every arm, on each backend
asked for (a model, or the reader and writer oracles); the figures, and what
they were measured on (the backend, the machine's load while it ran)."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from omoide.check.arms import ARMS, DEFAULT_STYLE, SEARCH, Arm, arm
from omoide.check.floors import ABOUT, FLOOR_ARM, FLOORS, Floor, FloorBackend
from omoide.check.judge import JUDGE_PROMPT, judge_all
from omoide.check.results import ArmResult
from omoide.check.runner import Advance, ArmRun
from omoide.check.scenario import Scenario, shipped
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
    oracles: tuple[str, ...]
    """The oracles run ('reader', 'writer'); empty for a model."""
    scenarios: list[dict[str, Any]]
    context_size: int
    started: str
    cpus: int
    load_before: tuple[float, float, float] | None
    load_after: tuple[float, float, float] | None = None
    seconds: float = 0.0
    arms: list[ArmResult] = field(default_factory=list)
    judged: str = ""
    """The judge's backend and model, when one judged."""

    @property
    def oracle(self) -> bool:
        return bool(self.oracles)

    def results(self, arm: str, oracle: str = "") -> list[ArmResult]:
        return [r for r in self.arms if r.arm == arm and r.oracle == oracle]

    def arm_names(self, *, floors: bool = False) -> list[str]:
        """The arms run, in order; with `floors`, the floors of a model's run after them."""
        return list(dict.fromkeys(r.arm for r in self.arms if floors or not r.floor))

    def as_json(self) -> dict[str, Any]:
        return {
            "backend": self.backend, "model": self.model, "oracles": list(self.oracles), "scenarios": self.scenarios,
            "context_size": self.context_size, "started": self.started, "seconds": round(self.seconds, 1),
            "cpus": self.cpus, "load_average_before": self.load_before, "load_average_after": self.load_after,
            "judge": self.judged or None, "judge_prompt": JUDGE_PROMPT if self.judged else None,
            "arms": [a.as_json() for a in self.arms],
        }


def skipped(kind: str, arm: Arm) -> bool:
    """The writer oracle skips the baselines but the search: they do no memory work, so its
    figures would be the reader's (the search matches the tokens each oracle's default style took)."""
    return kind == "writer" and arm.baseline and arm.name != SEARCH


def total_turns(arms: Sequence[Arm], scenarios: Sequence[Scenario], kinds: Sequence[str] = ("",)) -> int:
    """The turns a check of `arms` on `scenarios` plays with backends of these `kinds` (an oracle's, or "")."""
    return sum(s.turns() for kind in kinds for arm in arms if not skipped(kind, arm) for s in scenarios)


def describe(scenario: Scenario) -> dict[str, Any]:
    return {"name": scenario.name, "family": scenario.family, "seed": scenario.seed, "source": scenario.source,
            "messages": scenario.messages(), "questions": len(scenario.questions), "about": scenario.about}


async def run_check(
    settings: Settings, backends: Sequence[Backend], *, arms: Sequence[Arm] = ARMS,
    scenarios: Sequence[Scenario] | None = None, summarizer: Backend | None = None, judge: Backend | None = None,
    advance: Advance = lambda n: None, on_arm: Callable[[str], None] = lambda what: None, workers: int = 1,
    floors: bool = True,
) -> CheckReport:
    """Every scenario and arm, on each backend: one at a time on a model (its
    timings must not share the machine); on the oracles, which time nothing
    worth publishing, in `workers` processes at once. The writer oracle skips
    the baselines but the search: they do no memory work, so its figures would be
    the reader's.
    A model's run also runs its floors (check/floors.py) on every scenario."""
    import time

    chosen = list(scenarios) if scenarios is not None else shipped()
    oracles = tuple(str(getattr(b, "kind")) for b in backends if hasattr(b, "study") and hasattr(b, "kind"))
    first = backends[0]
    report = CheckReport(
        backend=getattr(first, "name", "?"), model=getattr(first, "model", "") or "", oracles=oracles,
        scenarios=[describe(s) for s in chosen], context_size=settings.backend.context_size,
        started=datetime.now(timezone.utc).isoformat(timespec="seconds"), cpus=os.cpu_count() or 1,
        load_before=load_average(),
    )
    began = time.perf_counter()
    jobs = [(str(getattr(backend, "kind", "")) if hasattr(backend, "study") else "", backend, scenario, arm)
            for backend in backends for scenario in chosen for arm in arms]
    jobs = [job for job in jobs if not skipped(job[0], job[3])]
    parallel = workers > 1 and all(kind for kind, *_ in jobs)
    for batch in ([job for job in jobs if job[3].name != SEARCH], [job for job in jobs if job[3].name == SEARCH]):
        tuned = [(kind, backend, scenario, arm, search_settings(settings, report.arms, kind, scenario, arm))
                 for kind, backend, scenario, arm in batch]
        if parallel and tuned:
            report.arms += await _in_parallel([(s, kind, scenario, arm) for kind, _, scenario, arm, s in tuned], workers,
                                              advance, on_arm)
            continue
        for kind, backend, scenario, arm, arm_settings in tuned:
            on_arm(f"{kind + ' oracle: ' if kind else ''}{scenario.name}: {arm.name}")
            run = ArmRun(arm, scenario, arm_settings, backend, summarizer=None if kind else summarizer, advance=advance)
            result = await run.run()
            result.oracle = kind
            report.arms.append(result)
    place = {(kind, scenario.name, arm.name): n for n, (kind, _, scenario, arm) in enumerate(jobs)}
    report.arms.sort(key=lambda r: place[r.oracle, r.scenario, r.arm])  # the search ran last; shown in its place
    if floors and not oracles:
        report.arms += [await _floor(settings, kind, scenario, advance, on_arm) for scenario in chosen for kind in FLOORS]
    report.seconds = time.perf_counter() - began
    report.load_after = load_average()
    if judge is not None:
        await judge_all(judge, [r for r in report.arms if not r.oracle and not r.floor], {s.name: s for s in chosen})
        report.judged = f"{getattr(judge, 'name', '?')} · {getattr(judge, 'model', '') or 'default'}"
    return report


def floor_turns(scenarios: Sequence[Scenario]) -> int:
    """The turns the floors of a model's run take (for the progress bar)."""
    return len(FLOORS) * sum(s.turns() for s in scenarios)


async def _floor(settings: Settings, kind: Floor, scenario: Scenario, advance: Advance,
                 on_arm: Callable[[str], None]) -> ArmResult:
    on_arm(f"floor: {scenario.name}: {kind}")
    result = await ArmRun(arm(FLOOR_ARM), scenario, settings, FloorBackend(kind), advance=advance).run()
    result.arm, result.about, result.floor = kind, ABOUT[kind], True
    return result


def search_settings(settings: Settings, done: Sequence[ArmResult], kind: str, scenario: Scenario, arm: Arm) -> Settings:
    """The search arm fills as many tokens as the default style's memory took on
    the same story with the same backend (its prompt less the window arm's), so
    the table compares the two at the same cost (the window arm is the reader's
    alone: it does no memory work); SEARCH_PERCENT of the context when this run
    has not both."""
    if arm.name != SEARCH:
        return settings
    mean = {r.arm: r.tokens_per_turn() for r in done if r.scenario == scenario.name and r.oracle == kind}
    default = mean.get(DEFAULT_STYLE)
    window = next((r.tokens_per_turn() for r in done if r.scenario == scenario.name and r.arm == "window"), None)
    if default is None or window is None:
        return settings
    return settings.updated(recall_passages_tokens=max(0, round(default - window)))


def _oracle_job(settings: Settings, kind: str, scenario: Scenario, arm_name: str) -> ArmResult:
    """One oracle arm in a worker process of its own."""
    import asyncio

    from omoide.check.oracle import OracleBackend

    if kind == "writer":  # memory work in the story's own words, the product's path on the embedded models
        settings = settings.updated(memory_writer="extract")
    result = asyncio.run(ArmRun(arm(arm_name), scenario, settings, OracleBackend(kind)).run())  # type: ignore[arg-type]
    result.oracle = kind
    return result


async def _in_parallel(jobs: list[tuple[Settings, str, Scenario, Arm]], workers: int, advance: Advance,
                       on_arm: Callable[[str], None]) -> list[ArmResult]:
    """The oracle arms in worker processes, the longest stories first; the
    results in the order of `jobs` (progress moves as each arm ends)."""
    import asyncio
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    loop = asyncio.get_running_loop()
    order = sorted(range(len(jobs)), key=lambda n: -jobs[n][2].turns())
    with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = {n: loop.run_in_executor(pool, _oracle_job, jobs[n][0], jobs[n][1], jobs[n][2], jobs[n][3].name)
                   for n in order}
        pending = {future: n for n, future in futures.items()}
        on_arm(f"oracles: {len(jobs)} arm runs in {workers} processes")
        while pending:
            done, _ = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            for future in done:
                advance(jobs[pending.pop(future)][2].turns())
        return [futures[n].result() for n in range(len(jobs))]
