"""Every path omoide uses, in one place. OMOIDE_HOME moves all of them
(data, config and logs) under one directory; tests rely on that."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

APP_NAME = "omoide"


def _home() -> Path | None:
    value = os.environ.get("OMOIDE_HOME")
    return Path(value).expanduser() if value else None


def data_dir() -> Path:
    home = _home()
    return home / "data" if home else Path(platformdirs.user_data_dir(APP_NAME))


def config_dir() -> Path:
    home = _home()
    return home / "config" if home else Path(platformdirs.user_config_dir(APP_NAME))


def log_dir() -> Path:
    home = _home()
    return home / "logs" if home else Path(platformdirs.user_log_dir(APP_NAME))


def config_file() -> Path:
    override = os.environ.get("OMOIDE_CONFIG")
    return Path(override).expanduser() if override else config_dir() / "config.toml"


def database_file() -> Path:
    return data_dir() / "omoide.db"


def user_characters_dir() -> Path:
    return data_dir() / "characters"


def bundled_characters_dir() -> Path:
    """The characters shipped with omoide: inside the wheel, or at the repo root
    in an editable install."""
    packaged = Path(__file__).parent / "_bundled_characters"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[2] / "characters"


def lorebooks_dir() -> Path:
    """Standalone lorebooks: files here apply to every chat, files in a
    subfolder named after a character apply to that character's chats."""
    return data_dir() / "lorebooks"


def log_file() -> Path:
    return log_dir() / "omoide.log"
