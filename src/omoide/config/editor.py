"""Opening a file in the user's editor ($VISUAL, else $EDITOR, else vi)."""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path

from omoide.errors import ConfigError


def open_in_editor(path: Path) -> str | None:
    """Edit `path` in the user's editor and wait for it to close. None when it
    exited cleanly, else what went wrong (its exit status) for the user."""
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    try:
        status = subprocess.run([*shlex.split(editor), str(path)], check=False).returncode
    except OSError as exc:
        raise ConfigError(f"Cannot start the editor '{editor}': {exc.strerror or exc}.",
                          f"Set $EDITOR to your editor, or edit {path} directly.") from exc
    return f"the editor '{editor}' exited with status {status}" if status != 0 else None
