"""When Pilot's wait for the screen to settle times out, say which widgets had
not settled and what their tasks were doing, then wait once more.

Pilot (`press`, `click`) waits up to 30 s for the app and every widget of the
screen to run a callback it queues. A timeout there says only "Timed out";
this says who held it up (a warning, so a run that passed on the second wait
still shows it in pytest's summary) and gives the screen a second wait, with
callbacks queued afresh, before the test fails.
"""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import Awaitable, Callable
from typing import Any

from textual.pilot import Pilot, WaitForScreenTimeout

Wait = Callable[..., Awaitable[bool]]


def unsettled(app: Any) -> list[str]:
    """The app and widgets of its screen with messages still queued, each with where its task is."""
    try:
        nodes = [app, *app.screen.walk_children(with_self=True)]
    except Exception as exc:  # noqa: BLE001 - the app is closing: say so, nothing more
        return [f"(the screen could not be walked: {exc!r})"]
    found = []
    for node in nodes:
        queue = getattr(node, "_message_queue", None)
        if queue is None or not queue.qsize():
            continue
        task: asyncio.Task[Any] | None = getattr(node, "_task", None)
        found.append(f"{node!r}: {queue.qsize()} queued; " + ("no task" if task is None else awaiting(task)))
    return found


def awaiting(task: asyncio.Task[Any]) -> str:
    """Where `task` waits: each coroutine it is suspended in, outermost first."""
    places = []
    coro: Any = task.get_coro()
    while coro is not None and len(places) < 24:
        frame = getattr(coro, "cr_frame", None) or getattr(coro, "gi_frame", None)
        if frame is not None:
            places.append(f"{frame.f_code.co_name} ({frame.f_code.co_filename.rsplit('/', 1)[-1]}:{frame.f_lineno})")
        coro = getattr(coro, "cr_await", None) or getattr(coro, "gi_yieldfrom", None)
    return " -> ".join(places) or "running"


def patient(wait: Wait) -> Wait:
    async def wait_for_screen(self: Pilot[Any], timeout: float = 30.0) -> bool:
        try:
            return await wait(self, timeout)
        except WaitForScreenTimeout:
            stuck = unsettled(self.app)
            warnings.warn(f"the screen had not settled after {timeout:.1f} s: " + "; ".join(stuck or ["nothing queued"]),
                          stacklevel=2)
            return await wait(self, timeout)

    return wait_for_screen


def install() -> None:
    if not getattr(Pilot._wait_for_screen, "patient", False):
        waiting = patient(Pilot._wait_for_screen)
        waiting.patient = True  # type: ignore[attr-defined]
        Pilot._wait_for_screen = waiting  # type: ignore[method-assign]
