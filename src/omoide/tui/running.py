"""Running the TUI on an open session, in the caller's event loop, with
SIGTERM and SIGHUP ending it the way Ctrl+Q does.

Closing the terminal hangs it up: every write to it fails from then on. Textual
writes from a thread of its own, which a failed write would end; the app's
next writes would then wait forever for that thread, and the event loop with
them, so the app never saw the SIGHUP (nor a SIGTERM after it). So the app's
output is written through `HangupSafeOutput`, which drops what a gone
terminal cannot take; a SIGHUP from a gone terminal points the standard
streams at /dev/null; and
the handlers are plain signal handlers, which run even while the loop is
stuck, with a deadline: a process told to end ends, cleanly within
EXIT_GRACE seconds or at once after that (or at a second signal).
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import os
import signal
import threading
from collections.abc import Callable
from types import FrameType
from typing import IO, Any

from omoide.chat.session import ChatSession
from omoide.tui.app import OmoideApp

EXIT_GRACE = 10.0
"""Seconds a signalled app has to store what streamed and close before the process is ended regardless."""

log = logging.getLogger(__name__)


class HangupSafeOutput:
    """The terminal as Textual's writer thread sees it: once the terminal is gone
    (EIO, EPIPE), writes are dropped instead of raising in that thread."""

    def __init__(self, file: IO[str]) -> None:
        self._file = file
        self.gone = False

    def write(self, text: str) -> int:
        if not self.gone:
            try:
                self._file.write(text)
            except OSError:
                self.gone = True
        return len(text)

    def flush(self) -> None:
        if not self.gone:
            try:
                self._file.flush()
            except OSError:
                self.gone = True

    def __getattr__(self, name: str) -> Any:
        return getattr(self._file, name)


def _hangup_safe_driver(app: OmoideApp) -> None:
    """Give the app a driver whose output survives the terminal going away (POSIX)."""
    try:
        from textual.drivers.linux_driver import LinuxDriver
    except ImportError:  # Windows: no hang-ups to survive
        return
    if app.driver_class is not LinuxDriver:  # a headless or web driver has no terminal to lose
        return

    class HangupSafeDriver(LinuxDriver):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            terminal: Any = self._file
            self._file = HangupSafeOutput(terminal)  # type: ignore[assignment]

    app.driver_class = HangupSafeDriver


def _hung_up(fd: int) -> bool:
    """Whether the terminal on `fd` is gone: a hung-up terminal answers EIO."""
    try:
        import termios
    except ImportError:  # Windows
        return False
    try:
        termios.tcgetattr(fd)
    except termios.error as exc:
        return bool(exc.args) and exc.args[0] == errno.EIO
    except (OSError, ValueError):
        return False
    return False


def _detach_from_terminal() -> None:
    """The terminal hung up: what anything writes from now on goes nowhere, and
    reading finds the end of the input, instead of failing. (A SIGHUP sent by
    hand leaves a live terminal alone: the app restores it as it exits.)"""
    if not _hung_up(2):
        return
    log.info("the terminal hung up; ending the chat")
    with contextlib.suppress(OSError):
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        os.close(null)


def _install(handled: list[int], on_signal: Callable[[int, FrameType | None], None]) -> dict[int, Any]:
    previous: dict[int, Any] = {}
    for signum in handled:
        try:
            previous[signum] = signal.signal(signum, on_signal)
        except (ValueError, OSError):  # not the main thread
            pass
    return previous


async def run_chat_async(session: ChatSession) -> None:
    """Run the TUI on an open session, in the caller's event loop (the session's
    store connection and memory worker live there).

    SIGTERM and SIGHUP end the app the way Ctrl+Q does, so a streaming reply is
    kept (interrupted) and, if the terminal is still there, it leaves the
    alternate screen with mouse tracking off; the process then exits with
    128 + the signal number."""
    app = OmoideApp(session)
    _hangup_safe_driver(app)
    loop = asyncio.get_running_loop()
    received: list[int] = []

    def hard_exit(code: int) -> None:
        log.error("the app did not end within %.0f s of a signal; ending the process", EXIT_GRACE)
        logging.shutdown()
        os._exit(code)

    def on_signal(signum: int, _frame: FrameType | None) -> None:
        # A plain signal handler: it runs between two bytecodes of the main
        # thread, even while the event loop is stuck, so it never waits on it.
        code = 128 + signum
        if received:
            os._exit(128 + received[0])  # told twice: now
        received.append(signum)
        if signum == getattr(signal, "SIGHUP", None):
            _detach_from_terminal()
        watchdog = threading.Timer(EXIT_GRACE, hard_exit, (code,))
        watchdog.daemon = True
        watchdog.start()
        loop.call_soon_threadsafe(lambda: app.exit(return_code=code))

    handled = [s for s in (getattr(signal, "SIGTERM", None), getattr(signal, "SIGHUP", None)) if s is not None]
    previous = _install([int(s) for s in handled], on_signal)
    try:
        await app.run_async()
    finally:
        for signum, handler in previous.items():
            with contextlib.suppress(ValueError, OSError):
                signal.signal(signum, handler)
    if received:
        raise SystemExit(128 + received[0])
