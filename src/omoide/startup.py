"""The garbage collector, held from the `omoide` command's first import until
the chat's first screen is drawn: start-up creates some hundred thousand
long-lived objects (modules, classes, Textual's styles), and collecting while
they are made only rescans them: 30-45 ms of the half second to the first
screen, measured with benchmarks/chat_speed.py. `omoide.launch` holds it; the
TUI releases it after its first paint, every other command before it parses
its arguments."""

from __future__ import annotations

import gc

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
