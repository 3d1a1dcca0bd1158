"""Changing top-level settings in config.toml without losing what the user wrote.

Only the lines of the keys being set are touched; comments, order and tables
stay as they were. The result is read back before it replaces the file, and
if anything but the asked-for keys would change (a value spread over several
lines, say), the file is left alone and the user is told what to write.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

from omoide import locations
from omoide.errors import ConfigError

_TABLE = re.compile(r"^\s*\[")
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")


def _literal(value: str | bool | int | float) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    # TOML forbids raw control characters in a string, and a name from a server may hold some.
    return '"' + _CONTROL.sub(lambda m: f"\\u{ord(m.group()):04X}", escaped) + '"'


def _key_line(key: str) -> re.Pattern[str]:
    return re.compile(rf"^\s*{re.escape(key)}\s*=")


def update_config(values: dict[str, str | bool | int | float | None], path: Path | None = None) -> Path:
    """Set (or, with None, remove) top-level keys in the config file."""
    path = path or locations.config_file()
    old_text = path.read_text(encoding="utf-8") if path.exists() else ""
    try:
        before = tomllib.loads(old_text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"Cannot change {path}: it is not valid TOML ({exc}).", "Fix the file first; nothing was changed.") from exc
    lines = old_text.splitlines()
    first_table = next((i for i, line in enumerate(lines) if _TABLE.match(line)), len(lines))
    top, rest = lines[:first_table], lines[first_table:]
    for key, value in values.items():
        pattern = _key_line(key)
        top = [line for line in top if not pattern.match(line)] if value is None else top
        if value is None:
            continue
        new_line = f"{key} = {_literal(value)}"
        index = next((i for i, line in enumerate(top) if pattern.match(line)), None)
        if index is None:
            while top and not top[-1].strip():
                top.pop()
            top.append(new_line)
        else:
            top[index] = new_line
    new_text = "\n".join(top + ([""] if rest else []) + rest) + "\n"
    _check(before, new_text, values, path)
    # It may hold api_key: readable by the user only, like the folder it is in.
    return locations.write_private(path, new_text)


def _check(before: dict[str, Any], new_text: str, values: dict[str, Any], path: Path) -> None:
    expected = {k: v for k, v in before.items() if k not in values}
    expected.update({k: v for k, v in values.items() if v is not None})
    try:
        after = tomllib.loads(new_text)
    except tomllib.TOMLDecodeError:
        after = None
    if after != expected:
        wanted = "\n".join(f"{k} = {_literal(v)}" for k, v in values.items() if v is not None)
        raise ConfigError(
            f"Cannot change {path} safely (a value there spans several lines); nothing was changed.",
            f"Edit it by hand: {wanted or 'remove ' + ', '.join(values)}",
        )
