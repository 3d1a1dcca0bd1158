"""tui/clipboard.py: the local clipboard tool found and fed (a real process),
never holding up the caller, and the last code block of a reply."""

from __future__ import annotations

import stat
import time
from pathlib import Path

import pytest

from omoide.tui import clipboard
from omoide.tui.clipboard import copy_text, describe, last_code_block, local_command


class Terminal:
    def __init__(self) -> None:
        self.sent: list[str] = []

    def copy_to_clipboard(self, text: str) -> None:
        self.sent.append(text)


def tool(folder: Path, name: str, body: str) -> Path:
    path = folder / name
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_the_local_tool_is_chosen_by_display(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(clipboard.sys, "platform", "linux")
    for name in ("wl-copy", "xclip"):
        tool(tmp_path, name, "cat >/dev/null")
    monkeypatch.setenv("PATH", str(tmp_path))
    assert local_command({"WAYLAND_DISPLAY": "wayland-0", "DISPLAY": ":0"}) == ["wl-copy"]
    assert local_command({"DISPLAY": ":0"}) == ["xclip", "-selection", "clipboard"]
    assert local_command({}) is None  # over SSH without a display: only OSC 52


def test_copy_sends_osc52_and_feeds_the_local_tool(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "got"
    fake = tool(tmp_path, "xclip", f"cat > {out}")
    monkeypatch.setattr(clipboard, "local_command", lambda: [str(fake)])
    terminal = Terminal()
    notice = copy_text(terminal, "Tea?\nYes, tea.", "the last reply")
    assert notice == "Copied the last reply (14 characters, 2 lines)."
    assert terminal.sent == ["Tea?\nYes, tea."]
    deadline = time.monotonic() + 30
    while not (out.exists() and out.read_text() == "Tea?\nYes, tea.") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert out.read_text() == "Tea?\nYes, tea."


def test_a_hanging_tool_never_holds_up_the_copy(tmp_path: Path) -> None:
    hang = tool(tmp_path, "xsel", "exec sleep 60")
    started = time.monotonic()
    thread = clipboard.copy_local("text", [str(hang)])
    assert thread is not None and time.monotonic() - started < 1.0  # returned at once: the tool runs behind
    thread.join(timeout=30)
    assert not thread.is_alive()  # given up after LOCAL_TIMEOUT, the tool killed


def test_a_missing_tool_is_no_error(tmp_path: Path) -> None:
    thread = clipboard.copy_local("text", [str(tmp_path / "absent")])
    assert thread is not None
    thread.join(timeout=30)
    assert not thread.is_alive()


def test_the_last_code_block() -> None:
    reply = "First:\n```\na = 1\n```\nThen:\n~~~python\nb = 2\nc = 3\n~~~\nDone."
    assert last_code_block(reply) == "b = 2\nc = 3"
    assert last_code_block("No code, just `inline`.") is None
    assert describe("x") == "1 character" and describe("a\nb") == "3 characters, 2 lines"
