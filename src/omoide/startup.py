"""What `omoide` holds while it starts, both set by `omoide.launch` first thing.

The garbage collector, from the command's first import until the chat's first
screen is drawn: start-up creates some hundred thousand long-lived objects
(modules, classes, Textual's styles), and collecting while they are made only
rescans them: 30-45 ms of the half second to the first screen, measured with
benchmarks/chat_speed.py. The TUI releases it after its first paint, every
other command before it parses its arguments.

The keys typed while `omoide chat` starts. Until Textual takes the terminal, it
is in its usual line mode: the keys typed are echoed over the shell, held in
the line buffer, and Enter becomes a line feed, which Textual then reads as
Ctrl+J, not Enter. `hold_keys()` switches the terminal to character mode
without echo at once, as Textual would, so what is typed waits unchanged in
the terminal's input queue for Textual to read; `release_keys()` puts the
terminal back as it was when the process ends. The TUI keeps the keys it reads
before the composer is ready and replays them (`tui/typeahead.py`).

Standard library only, and cheap: it runs before anything else is imported.
"""

from __future__ import annotations

import gc
import os
import signal
import sys
from types import FrameType
from typing import Any

_held = False


def hold_gc() -> None:
    global _held
    if gc.isenabled():
        gc.disable()
        _held = True


def release_gc() -> None:
    """Turn the collector back on, if `hold_gc` turned it off (idempotent)."""
    global _held
    if _held:
        _held = False
        gc.enable()


_saved: list[Any] | None = None
_fd: int | None = None
_previous_handlers: dict[int, Any] = {}


def hold_keys() -> None:
    """Character mode without echo on standard input, if it is a terminal (idempotent)."""
    global _saved, _fd
    if _saved is not None:
        return
    try:
        fd = sys.stdin.fileno()
        if not os.isatty(fd):
            return
        import termios

        before = termios.tcgetattr(fd)
        held = termios.tcgetattr(fd)
        # Keep ISIG: Ctrl+C still stops a start-up that takes too long.
        held[3] &= ~(termios.ECHO | termios.ICANON | termios.IEXTEN)
        held[0] &= ~(termios.ICRNL | termios.INLCR | termios.IGNCR)
        held[6][termios.VMIN] = 1
        held[6][termios.VTIME] = 0
        termios.tcsetattr(fd, termios.TCSANOW, held)  # TCSANOW: what is typed already stays
    except Exception:  # no terminal, not a POSIX one, or one that refuses: start-up carries on as before
        return
    _saved, _fd = before, fd
    for signum in (signal.SIGTERM, getattr(signal, "SIGHUP", None)):
        if signum is not None:
            _previous_handlers[signum] = signal.signal(signum, _restore_and_die)


def release_keys() -> None:
    """Put the terminal back as `hold_keys` found it (idempotent)."""
    global _saved, _fd
    saved, fd, _saved, _fd = _saved, _fd, None, None
    if saved is None or fd is None:
        return
    for signum, handler in _previous_handlers.items():
        try:
            if signal.getsignal(signum) is _restore_and_die:
                signal.signal(signum, handler)
        except (OSError, ValueError):
            pass
    _previous_handlers.clear()
    try:
        import termios

        termios.tcsetattr(fd, termios.TCSANOW, saved)
    except Exception:  # the terminal is gone (SIGHUP): nothing left to restore
        pass


def _restore_and_die(signum: int, frame: FrameType | None) -> None:
    """A SIGTERM or SIGHUP before the TUI installs its own handlers: end as the
    signal would have, but with the terminal back in line mode."""
    release_keys()
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)
