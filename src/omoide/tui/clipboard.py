"""Copying text out of omoide: through the terminal (OSC 52, which works over
SSH and, with `set -g set-clipboard on`, inside tmux), and also through the
machine's own clipboard tool when one is on PATH and a display exists.

`copy_text(app, text, what)` does both and returns the notice to show. The
local tool runs in a daemon thread with a time limit, so a hung tool (an
xclip waiting for a display that went away) never holds up the chat.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Mapping
from typing import Protocol

from omoide.safe_text import inert

LOCAL_TIMEOUT = 2.0
"""Seconds a local clipboard tool may take before it is given up."""

_FENCE = re.compile(r"^[ \t]*(```|~~~)[^\n]*\n(.*?)^[ \t]*\1[ \t]*$", re.MULTILINE | re.DOTALL)


class CopyTarget(Protocol):
    """What copying needs of the app: Textual's App has it (OSC 52)."""

    def copy_to_clipboard(self, text: str) -> None: ...


def local_command(environ: Mapping[str, str] | None = None) -> list[str] | None:
    """The argv of this machine's clipboard tool, or None when there is none
    (no tool on PATH, or no display for the one there is)."""
    env = os.environ if environ is None else environ
    if sys.platform == "darwin":
        return ["pbcopy"] if shutil.which("pbcopy") else None
    if env.get("WAYLAND_DISPLAY") and shutil.which("wl-copy"):
        return ["wl-copy"]
    if env.get("DISPLAY"):
        if shutil.which("xclip"):
            return ["xclip", "-selection", "clipboard"]
        if shutil.which("xsel"):
            return ["xsel", "--clipboard", "--input"]
    return None


def _run_local(argv: list[str], text: str) -> None:
    try:
        with subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              start_new_session=True) as process:
            try:
                process.communicate(text.encode("utf-8"), timeout=LOCAL_TIMEOUT)
            except subprocess.TimeoutExpired:
                process.kill()
    except OSError:
        pass  # the terminal's copy (OSC 52) was sent already; the local one is a bonus


def copy_local(text: str, argv: list[str] | None = None) -> threading.Thread | None:
    """Hand `text` to the local clipboard tool in the background (the thread, or
    None when there is no tool)."""
    argv = argv if argv is not None else local_command()
    if argv is None:
        return None
    thread = threading.Thread(target=_run_local, args=(argv, text), name="omoide-clipboard", daemon=True)
    thread.start()
    return thread


def describe(text: str) -> str:
    """'42 characters' or '42 characters, 3 lines'."""
    lines = text.count("\n") + 1
    chars = f"{len(text):,} character{'s' if len(text) != 1 else ''}"
    return chars if lines == 1 else f"{chars}, {lines} lines"


def copy_text(app: CopyTarget, text: str, what: str = "the text") -> str:
    """Copy `text` (through the terminal and the local clipboard) and return the
    notice saying what was copied, e.g. 'Copied the last reply (42 characters).'"""
    text = inert(text)  # the terminal's copy is made inert by the app; the local tool's must be too
    app.copy_to_clipboard(text)
    copy_local(text)
    return f"Copied {what} ({describe(text)})."


def last_code_block(text: str) -> str | None:
    """The content of the last fenced code block (``` or ~~~) in `text`, if any."""
    blocks = _FENCE.findall(text)
    if not blocks:
        return None
    return str(blocks[-1][1]).rstrip("\n")
