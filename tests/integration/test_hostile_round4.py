"""Hostile input, fourth round (issue 43), through the commands a user runs in
a subprocess: a model_path that is not a model file, a keymap that names no
key, a damaged write-ahead log."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


def omoide(*args: str, home: Path, env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    environ = {**os.environ, "OMOIDE_HOME": str(home), "OMOIDE_DISCOVER_SERVERS": "[]", **(env or {})}
    return subprocess.run([sys.executable, "-m", "omoide.cli.app", *args], capture_output=True, text=True, env=environ,
                          timeout=timeout)


def said(result: subprocess.CompletedProcess[str]) -> str:
    text = result.stdout + result.stderr
    assert "Traceback" not in text, text
    return " ".join(text.split())


# -- 12: model_path that is a FIFO, a link to /dev/zero, a folder ------------------------------------


@pytest.mark.parametrize(("kind", "expected"), [
    ("fifo", "is a FIFO (named pipe), not a model file."),
    ("zero", "is a link to /dev/zero, which is a device, not a model file."),
    ("folder", "is a folder, not a model file."),
    ("missing", "does not exist."),
])
def test_a_model_path_that_is_not_a_model_file_says_what_it_is(kind: str, expected: str, tmp_path: Path) -> None:
    path = tmp_path / f"model-{kind}"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "zero":
        path.symlink_to("/dev/zero")
    elif kind == "folder":
        path.mkdir()
    env = {"OMOIDE_BACKEND": "local", "OMOIDE_MODEL_PATH": str(path)}
    doctor = omoide("doctor", home=tmp_path / "home", env=env)
    assert doctor.returncode == 1 and f"✗ backend: The model file {path} {expected}" in said(doctor)
    say = omoide("say", "suzune", "hello", home=tmp_path / "home", env=env)
    assert say.returncode == 1 and f"The model file {path} {expected}" in said(say)
    assert "Fix model_path in the config" in said(say)
