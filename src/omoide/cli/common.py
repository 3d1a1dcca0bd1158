"""What every command group shares: the consoles, running a command's async
work, and failing with a message.

Error messages carry server text, file names and card fields: they are printed
through `safe_text`, never as markup and never as escape sequences."""

from __future__ import annotations

import asyncio
import signal
import sys
from collections.abc import Awaitable, Callable
from typing import NoReturn, TypeVar

import typer
from rich.console import Console
from rich.text import Text

from omoide.errors import NothingYet, OmoideError
from omoide.safe_text import safe

T = TypeVar("T")


def stdout() -> Console:
    return Console(highlight=False)


def stderr() -> Console:
    return Console(stderr=True, highlight=False)


def fail(exc: OmoideError) -> NoReturn:
    """Print the error and its hint to stderr and exit with status 1; for
    `NothingYet`, say what there is not yet and what to do, and exit 0."""
    err = stderr()
    if isinstance(exc, NothingYet):
        err.print(safe(exc.message), soft_wrap=True)
        if exc.hint:
            err.print(safe(exc.hint, "dim"), soft_wrap=True)
        raise typer.Exit(0)
    err.print(Text.assemble(("Error: ", "bold red"), safe(exc.message)), soft_wrap=True)
    if exc.hint:
        err.print(safe(exc.hint, "dim"), soft_wrap=True)
    raise typer.Exit(1)


def run(work: Callable[[], Awaitable[T]]) -> T:
    """Run a command's async work: logging to the log file, the config file's
    warnings on stderr, an OmoideError as its message (`fail`), Ctrl+C as 130,
    and SIGTERM or SIGHUP as 128 + the signal, after the work's own clean-up
    (a reply stored as interrupted, the embedded engine's socket folder removed
    at exit), as Ctrl+C does; a second one ends the process at once."""
    from omoide.config.logs import setup_logging
    from omoide.config.settings import config_warnings

    setup_logging()
    err = stderr()
    for warning in config_warnings():
        err.print(safe(f"Warning: {warning}", "yellow"), soft_wrap=True)
    received: list[int] = []
    try:
        result = asyncio.run(_stopped_by_signals(work, received))
    except OmoideError as exc:
        _damage_found()
        fail(exc)
    except KeyboardInterrupt:
        err.print(Text("Interrupted. Whatever had arrived is kept.", style="dim"))
        raise typer.Exit(130) from None
    except asyncio.CancelledError:
        if not received:
            raise
    if received:
        err.print(Text(f"Stopped by {signal.Signals(received[0]).name}. Whatever had arrived is kept.", style="dim"))
        raise typer.Exit(128 + received[0])
    _damage_found()
    return result


def _damage_found() -> None:
    """A damaged write-ahead log found by this command's open of the database (store/wal.py)."""
    wal = sys.modules.get("omoide.store.wal")  # loaded only when the command opened the database
    for text in getattr(wal, "found_now", []):
        stderr().print(safe(f"Warning: {text}", "yellow"), soft_wrap=True)


async def _stopped_by_signals(work: Callable[[], Awaitable[T]], received: list[int]) -> T:
    """`work`, cancelled by a SIGTERM or SIGHUP (noted in `received`)."""
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    handled: list[int] = []

    def stop(signum: int) -> None:
        received.append(signum)
        loop.remove_signal_handler(signum)  # a second one: the default, at once
        if task is not None:
            task.cancel()

    for signum in (getattr(signal, "SIGTERM", None), getattr(signal, "SIGHUP", None)):
        if signum is None or signal.getsignal(signum) is not signal.SIG_DFL:
            continue  # someone else's (`omoide chat`'s start-up hands the terminal back first)
        try:
            loop.add_signal_handler(signum, stop, int(signum))
            handled.append(int(signum))
        except (NotImplementedError, RuntimeError, ValueError):  # no such handlers here (Windows, a worker thread)
            pass
    try:
        return await work()
    finally:
        for signum in handled:
            loop.remove_signal_handler(signum)
