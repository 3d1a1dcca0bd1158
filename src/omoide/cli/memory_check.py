"""`omoide memory check`: how much a character remembers on your backend, per
memory style and against baselines, over scenario files (omoide.check;
docs/memory-check.md)."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.text import Text

from omoide.cli.common import fail, stderr, stdout
from omoide.errors import CommandError, OmoideError

if TYPE_CHECKING:
    from omoide.check.arms import Arm
    from omoide.check.run import CheckReport
    from omoide.check.scenario import Scenario
    from omoide.config.settings import Settings

app = typer.Typer(name="memory", help="Measure what the characters remember: `omoide memory check`.", no_args_is_help=True)
ORACLES = ("reader", "writer")


@app.command("check")
def check(
    scenario: Annotated[list[Path] | None, typer.Option(
        "--scenario", help="A scenario file to run (repeatable; default: the shipped ones). "
                           "docs/memory-check.md has the format.")] = None,
    arms: Annotated[str | None, typer.Option("--arms", help="Which arms, comma-separated (default: all): window, full, "
                                             "search, summary, memos, both, summary+world, memos+world, both+world.")] = None,
    oracle: Annotated[bool, typer.Option("--oracle", help="Run on the oracles instead of your model: what the design "
                                         "itself keeps, with a writer that knows the answers and one that does not.")] = False,
    oracles: Annotated[str | None, typer.Option("--oracles", help="With --oracle: which of them (reader, writer).")] = None,
    judge_url: Annotated[str | None, typer.Option("--judge-url", help="An OpenAI-compatible server that judges each "
                                                  "answer too (not the model under test; its prompt is printed).")] = None,
    judge_model: Annotated[str | None, typer.Option("--judge-model", help="The judge's model on that server.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the results as JSON on standard output.")] = False,
    show_answers: Annotated[bool, typer.Option("--answers", help="Also print every answer.")] = False,
) -> None:
    """Play scenarios (a story over simulated days that plants facts, lets them
    leave the window, and asks them back in other words) on every memory style
    and against window-only, full-context and search-only baselines; score per
    category. A model's run shows its floors beside it: a server that always
    declines and one that always names the story's most frequent name. Runs in
    a throw-away data directory: your chats are never opened."""
    from omoide.check.arms import ARMS, arm as named_arm
    from omoide.check.scenario import load, shipped

    try:
        chosen = [named_arm(name.strip()) for name in arms.split(",") if name.strip()] if arms else list(ARMS)
    except KeyError as exc:
        fail(CommandError(f"There is no arm called {exc}.", f"Arms: {', '.join(a.name for a in ARMS)}."))
    if not chosen:
        fail(CommandError("No arm was named.", f"Arms: {', '.join(a.name for a in ARMS)}."))
    kinds = tuple(k.strip() for k in (oracles or ",".join(ORACLES)).split(",") if k.strip())
    if oracles and not oracle:
        fail(CommandError("--oracles chooses among the oracles of --oracle.", "Add --oracle."))
    if unknown := [k for k in kinds if k not in ORACLES]:
        fail(CommandError(f"There is no oracle called '{unknown[0]}'.", "Oracles: reader, writer."))
    if judge_url and oracle:
        fail(CommandError("The oracles need no judge: their answers are the ideal reader's.", "Drop --judge-url or --oracle."))
    try:
        stories = [load(path) for path in scenario] if scenario else shipped()
        report = asyncio.run(_run(chosen, stories, kinds if oracle else (), judge_url, judge_model))
    except OmoideError as exc:
        fail(exc)
    except KeyboardInterrupt:
        stderr().print(Text("Interrupted: no figures (a check cut short measures nothing whole).", style="dim"))
        raise typer.Exit(130) from None
    if as_json:
        from omoide.safe_text import json_text

        sys.stdout.write(json_text(report.as_json(), indent=1) + "\n")
        return
    from omoide.check.report import show

    show(stdout(), report, with_answers=show_answers)


def _judge(settings: Settings, url: str, model: str | None) -> tuple[Settings, str]:
    judged = settings.updated(backend="openai", base_url=url, **({"model": model} if model else {}))
    same = ((judged.backend.base_url or "").rstrip("/") == (settings.backend.base_url or "").rstrip("/")
            and judged.backend.model == settings.backend.model)
    if same:
        raise CommandError("The judge is the model under test.", "Give --judge-url (and --judge-model) of another model.")
    return judged, url


async def _run(arms: list[Arm], scenarios: list[Scenario], oracles: tuple[str, ...], judge_url: str | None,
               judge_model: str | None) -> CheckReport:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from omoide.chat.runtime import make_summarizer
    from omoide.check.oracle import OracleBackend
    from omoide.check.run import floor_turns, run_check, total_turns
    from omoide.config.settings import load_settings
    from omoide.llm.base import Backend
    from omoide.llm.factory import make_backend

    settings = load_settings()
    opened: list[Backend] = []
    if oracles:
        backends: list[Backend] = [OracleBackend(kind) for kind in oracles]  # type: ignore[arg-type]
        summarizer = None
    else:
        model = make_backend(settings)
        backends = [model]
        summarizer = make_summarizer(settings, model)
        opened += [model, summarizer]
    judge = None
    if judge_url:
        judge = make_backend(_judge(settings, judge_url, judge_model)[0])
        opened.append(judge)
    turns = total_turns(arms, scenarios, oracles or ("",))
    turns += 0 if oracles else floor_turns(scenarios)
    err = stderr()
    progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                        console=err, transient=True)
    task = progress.add_task("memory check", total=turns)
    advance: Callable[[int], None] = lambda n: progress.advance(task, n)  # noqa: E731
    on_arm: Callable[[str], None] = lambda what: progress.update(task, description=Text(f"memory check: {what}"))  # type: ignore[arg-type]  # noqa: E731
    shown: AbstractContextManager[object] = progress
    if not err.is_terminal:  # a log: lines, not a bar redrawn in place
        lines = _ProgressLines(err, turns)
        advance, on_arm, shown = lines.advance, lines.arm, nullcontext()
    try:
        with shown:
            return await run_check(settings, backends, arms=arms, scenarios=scenarios, summarizer=summarizer, judge=judge,
                                   workers=max(1, min(os.cpu_count() or 1, 4)) if oracles else 1,
                                   advance=advance, on_arm=on_arm)
    finally:
        for backend in {id(b): b for b in opened}.values():
            await backend.aclose()


class _ProgressLines:
    """Progress for a log, not a terminal: a line when an arm starts and at
    every tenth of the turns, with the minutes since the start."""

    def __init__(self, console: Console, total: int) -> None:
        self.console = console
        self.total = max(1, total)
        self.done = 0
        self.started = time.monotonic()

    def _say(self, what: str) -> None:
        minutes = (time.monotonic() - self.started) / 60
        self.console.print(Text(f"memory check {self.done}/{self.total} turns, {minutes:.1f} min: {what}"))

    def arm(self, what: str) -> None:
        self._say(what)

    def advance(self, n: int) -> None:
        before = self.done * 10 // self.total
        self.done += n
        if self.done * 10 // self.total > before:
            self._say(f"{self.done * 100 // self.total} %")
