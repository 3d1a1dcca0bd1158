"""`omoide chat` itself in a real terminal: tmux at 160x50, as a user runs it.

The clock starts just before tmux launches the `omoide` command and stops when
the screen (read with `tmux capture-pane`, every POLL seconds) shows the text
it waits for: the last message of the chat, then, after Ctrl+Home, the first.
Resident memory is read from /proc for the `omoide` process itself.

As for a user, the terminal is already open when `omoide` starts: a session
that only sleeps keeps the tmux server up between launches, so no launch pays
for starting tmux. And omoide's modules are compiled, as a user's first
launch leaves them: `bytecode()` compiles any that are not, as Python does on the first launch
(unless PYTHONDONTWRITEBYTECODE is set, as it is on this project's machines)
and pip on `pip install .`; `without_bytecode()` measures an editable install
under PYTHONDONTWRITEBYTECODE=1, where every launch compiles them all.
"""

from __future__ import annotations

import atexit
import compileall
import importlib.util
import os
import shlex
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

SIZE = (160, 50)
POLL = 0.01
_launches = 0
SOCKET = "omoide-bench"
"""A tmux server of its own, so no one else's sessions are touched."""


@dataclass(frozen=True, slots=True)
class TerminalFigures:
    paint: float
    """Seconds from launching `omoide chat` to the chat's last message on screen."""
    jump: float
    """Seconds from Ctrl+Home to the chat's first message on screen."""
    rss_paint: float
    """Resident memory (MiB) of the omoide process when the last message was drawn."""
    rss_peak: float
    """Its peak resident memory (MiB, VmHWM) after the jump."""


def omoide_command() -> str:
    return str(Path(sys.executable).with_name("omoide"))


def _tmux(*args: str) -> str:
    return subprocess.run(["tmux", "-L", SOCKET, *args], capture_output=True, text=True, check=False).stdout


def _keep_server() -> None:
    if subprocess.run(["tmux", "-L", SOCKET, "has-session", "-t", "keep"], capture_output=True, check=False).returncode:
        _tmux("new-session", "-d", "-s", "keep", "sleep 86400")
        atexit.register(_tmux, "kill-server")


_ENV: dict[str, str] = {"OMOIDE_WELCOMED": "true"}
"""Variables every launch is given on top of OMOIDE_HOME and PYTHONPATH. The
first-run welcome is taken as given: the launches measure a returning user's
start (the welcome comes once, after the first paint)."""


def _package_root() -> Path:
    import omoide

    return Path(omoide.__file__).parent


def _stale(source: Path) -> bool:
    cached = Path(importlib.util.cache_from_source(str(source)))
    try:
        header = cached.read_bytes()[:16]
    except OSError:
        return True
    stat = source.stat()
    return (int.from_bytes(header[8:12], "little"), int.from_bytes(header[12:16], "little")) != (
        int(stat.st_mtime) & 0xFFFFFFFF, stat.st_size & 0xFFFFFFFF)


def bytecode() -> str:
    """Compile omoide's modules that lack up-to-date bytecode; says what it found."""
    root = _package_root()
    sources = sorted(root.rglob("*.py"))
    stale = [s for s in sources if _stale(s)]
    if stale:
        compileall.compile_dir(root, quiet=1)
    found = f"{len(stale)} of {len(sources)} without up-to-date bytecode, compiled now" if stale else f"all {len(sources)} compiled"
    return f"omoide's modules ({root}): {found}, as the first launch leaves them"


def without_bytecode() -> str:
    """Remove omoide's bytecode and launch with PYTHONDONTWRITEBYTECODE=1: every
    launch compiles every module, as for an editable install where that is set."""
    root = _package_root()
    for cache in root.rglob("__pycache__"):
        shutil.rmtree(cache)
    _ENV["PYTHONDONTWRITEBYTECODE"] = "1"
    return f"omoide's modules ({root}): no bytecode, and PYTHONDONTWRITEBYTECODE=1: every launch compiles them"


def tmux_screen(session: str) -> str:
    return _tmux("capture-pane", "-p", "-t", session)


def tmux_send(session: str, keys: str, *, literal: bool = False) -> None:
    _tmux("send-keys", "-t", session, *(["-l"] if literal else []), keys)


def _wait_for(session: str, text: str, timeout: float) -> float:
    deadline = time.perf_counter() + timeout
    while time.perf_counter() < deadline:
        if text in tmux_screen(session):
            return time.perf_counter()
        time.sleep(POLL)
    raise SystemExit(f"'{text}' never appeared on screen; the screen was:\n{tmux_screen(session)}")


def _memory(pid: int) -> tuple[float, float]:
    fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)
    return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024


def tmux_launch(home: str, args: tuple[str, ...]) -> str:
    """Start `omoide ARGS` on the data in `home` in a new tmux session; its name."""
    global _launches
    _launches += 1
    session = f"bench{os.getpid()}-{_launches}"
    _keep_server()
    env = f"OMOIDE_HOME={shlex.quote(home)}"
    if os.environ.get("PYTHONPATH"):
        env += f" PYTHONPATH={shlex.quote(os.environ['PYTHONPATH'])}"
    env += "".join(f" {k}={shlex.quote(v)}" for k, v in _ENV.items())
    command = f"exec env {env} {shlex.quote(omoide_command())} {' '.join(shlex.quote(a) for a in args)}"
    _tmux("new-session", "-d", "-s", session, "-x", str(SIZE[0]), "-y", str(SIZE[1]), command)
    return session


def _pid(session: str) -> int:
    return int(_tmux("list-panes", "-t", session, "-F", "#{pane_pid}").split()[0])


def tmux_stop(session: str, timeout: float = 30.0) -> None:
    """Ctrl+Q, wait for the process to end (the next launch must not meet it
    still closing), then close the session."""
    try:
        pid = _pid(session)
        tmux_send(session, "C-q")
        deadline = time.perf_counter() + timeout
        while Path(f"/proc/{pid}").exists() and time.perf_counter() < deadline:
            time.sleep(POLL)
    except (IndexError, ValueError):  # the process had already ended
        pass
    finally:
        _tmux("kill-session", "-t", session)


def run_chat(home: str, *, last: str, first: str, args: tuple[str, ...] = ("chat", "suzune"), timeout: float = 120.0) -> TerminalFigures:
    """Launch `omoide chat` on the data in `home`; `last` and `first` are texts
    of the chat's last and first messages, as they appear on screen."""
    start = time.perf_counter()
    session = tmux_launch(home, args)
    try:
        painted = _wait_for(session, last, timeout) - start
        pid = _pid(session)
        rss_paint, _ = _memory(pid)
        t0 = time.perf_counter()
        tmux_send(session, "C-Home")
        jumped = _wait_for(session, first, timeout) - t0
        _, rss_peak = _memory(pid)
        return TerminalFigures(painted, jumped, rss_paint, rss_peak)
    finally:
        tmux_stop(session, timeout)


def run_first_reply(home: str, *, last: str, reply: str, args: tuple[str, ...] = ("chat", "suzune"),
                    timeout: float = 120.0) -> tuple[float, float]:
    """Launch `omoide chat` on the data in `home`, wait for `last` (its last message)
    drawn, send a message: the time from Enter to `reply` (the reply's first words)
    drawn, and the process's peak resident memory then (MiB)."""
    session = tmux_launch(home, args)
    try:
        _wait_for(session, last, timeout)
        tmux_send(session, "go", literal=True)
        t0 = time.perf_counter()
        tmux_send(session, "Enter")
        replied = _wait_for(session, reply, timeout) - t0
        _, rss_peak = _memory(_pid(session))
        return replied, rss_peak
    finally:
        tmux_stop(session, timeout)


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.1f} (1 min), {five:.1f} (5 min) on {os.cpu_count()} cores"
