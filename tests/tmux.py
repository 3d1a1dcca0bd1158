"""tmux for the tests that run omoide in a real terminal: one way to send it a
command, one way to read a pane, one bounded wait that shows the pane when it fails.

`server` names a tmux server of the test's own (`tmux -L NAME`), for tests that
set options a shared server must not keep (set-clipboard on every session)."""

from __future__ import annotations

import asyncio
import subprocess
import time
from collections.abc import Callable


def tmux(*args: str, server: str | None = None) -> str:
    """Run a tmux command; what it printed."""
    where = ["-L", server] if server else []
    return subprocess.run(["tmux", *where, *args], capture_output=True, text=True, check=False).stdout


def capture(pane: str, server: str | None = None) -> str:
    """What `pane` shows now, line by line."""
    return tmux("capture-pane", "-p", "-t", pane, server=server)


async def until(condition: Callable[[], bool], what: str, pane: str, *, server: str | None = None,
                timeout: float = 60.0) -> None:
    """Wait, at most `timeout` seconds, for `condition`; failing, say `what` did not happen and show `pane`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"{what} did not happen; the pane shows:\n{capture(pane, server)}")
