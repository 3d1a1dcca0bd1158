"""Opening a file in the user's editor ($VISUAL, else $EDITOR, else vi)."""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path

from omoide.errors import ConfigError


def open_in_editor(path: Path) -> None:
    """Edit `path` in the user's editor and wait for it to close."""
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    try:
        subprocess.run([*shlex.split(editor), str(path)], check=False)
    except OSError as exc:
        raise ConfigError(f"Cannot start the editor '{editor}': {exc.strerror or exc}.",
                          f"Set $EDITOR to your editor, or edit {path} directly.") from exc
