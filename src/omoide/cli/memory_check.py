"""`omoide memory check`: how much a character remembers on your backend, per
memory style and against baselines (omoide.check; docs/memory-check.md)."""

from __future__ import annotations

import asyncio
import sys
from typing import TYPE_CHECKING, Annotated

import typer
from rich.text import Text

from omoide.cli.common import fail, stderr, stdout
from omoide.errors import CommandError, OmoideError

if TYPE_CHECKING:
    from omoide.check.arms import Arm
    from omoide.check.run import CheckReport

app = typer.Typer(name="memory", help="Measure what the characters remember: `omoide memory check`.", no_args_is_help=True)


@app.command("check")
def check(
    arms: Annotated[str | None, typer.Option("--arms", help="Which arms, comma-separated (default: all): window, full, "
                                             "search, summary, memos, both, summary+world, memos+world, both+world.")] = None,
    padding: Annotated[int | None, typer.Option("--padding", min=1, max=200,
                                                help="Turns of ordinary talk each evening (default: enough to leave the window).")] = None,
    oracle: Annotated[bool, typer.Option("--oracle", help="Run on the oracle instead of your model: what the design itself keeps.")] = False,
    judge: Annotated[bool, typer.Option("--judge", help="Also ask your model to judge each answer (its prompt is printed).")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the results as JSON on standard output.")] = False,
    show_answers: Annotated[bool, typer.Option("--answers", help="Also print every answer.")] = False,
) -> None:
    """Plant facts in a scripted conversation over simulated days, pad them out
    of the window, ask them back: per category (single, updated, time,
    abstention, knowledge boundary) and per memory style, against window-only,
    full-context and search-only baselines. Runs in a throw-away data
    directory: your chats are never opened."""
    from omoide.check.arms import ARMS, arm as named_arm

    try:
        chosen = [named_arm(name.strip()) for name in arms.split(",") if name.strip()] if arms else list(ARMS)
    except KeyError as exc:
        fail(CommandError(f"There is no arm called {exc}.", f"Arms: {', '.join(a.name for a in ARMS)}."))
    if not chosen:
        fail(CommandError("No arm was named.", f"Arms: {', '.join(a.name for a in ARMS)}."))
    try:
        report = asyncio.run(_run(chosen, padding=padding, oracle=oracle, judge=judge))
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


async def _run(arms: list[Arm], *, padding: int | None, oracle: bool, judge: bool) -> CheckReport:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from omoide.chat.runtime import make_summarizer
    from omoide.check.oracle import OracleBackend
    from omoide.check.run import run_check, total_turns
    from omoide.check.runner import default_padding
    from omoide.config.settings import load_settings
    from omoide.llm.base import Backend
    from omoide.llm.factory import make_backend

    settings = load_settings()
    model: Backend | None = None if oracle and not judge else make_backend(settings)
    backend: Backend = OracleBackend() if oracle or model is None else model
    summarizer = None if oracle else make_summarizer(settings, backend)
    turns = total_turns(arms, padding if padding is not None else default_padding(settings))
    progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                        console=stderr(), transient=True)
    try:
        with progress:
            task = progress.add_task("memory check", total=turns)
            return await run_check(
                settings, backend, arms=arms, padding=padding, summarizer=summarizer,
                judge=model if judge else None, oracle=oracle,
                advance=lambda n: progress.advance(task, n),
                on_arm=lambda arm: progress.update(task, description=f"memory check: {arm.name}"),
            )
    finally:
        for opened in {id(b): b for b in (model, summarizer) if b is not None}.values():
            await opened.aclose()
