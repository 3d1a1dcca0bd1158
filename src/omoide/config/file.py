"""Changing settings in config.toml without losing what the user wrote.

A setting is written in its section (`[backend] base_url = ...`); the same
setting written at the top of the file, as before the sections, is removed so
the two cannot disagree. Only the lines of the keys being set are touched;
comments, order and the other tables stay as they were. The result is read
back before it replaces the file, and if anything but the asked-for keys would
change (a value spread over several lines, say), the file is left alone and
the user is told what to write.
"""

from __future__ import annotations

import copy
import re
import tomllib
from pathlib import Path
from typing import Any

from omoide import locations
from omoide.config.fields import MAX_CONFIG_BYTES
from omoide.config.settings import PLACES
from omoide.errors import ConfigError

Value = str | bool | int | float
_HEADER = re.compile(r"^\s*\[")
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")


def _literal(value: Value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    # TOML forbids raw control characters in a string, and a name from a server may hold some.
    return '"' + _CONTROL.sub(lambda m: f"\\u{ord(m.group()):04X}", escaped) + '"'


def _key_line(key: str) -> re.Pattern[str]:
    return re.compile(rf"^\s*{re.escape(key)}\s*=")


def _table_line(table: str) -> re.Pattern[str]:
    return re.compile(rf"^\s*\[\s*{re.escape(table)}\s*\]\s*(#.*)?$")


def _drop_top(lines: list[str], key: str) -> list[str]:
    """`lines` without `key = ...` above the first table (where it stood before the sections)."""
    first_table = next((i for i, line in enumerate(lines) if _HEADER.match(line)), len(lines))
    pattern = _key_line(key)
    return [line for line in lines[:first_table] if not pattern.match(line)] + lines[first_table:]


def _set_in_table(lines: list[str], table: str, name: str, value: Value | None) -> list[str]:
    header = next((i for i, line in enumerate(lines) if _table_line(table).match(line)), None)
    new_line = None if value is None else f"{name} = {_literal(value)}"
    if header is None:
        if new_line is None:
            return lines
        while lines and not lines[-1].strip():
            lines = lines[:-1]
        return [*lines, *([""] if lines else []), f"[{table}]", new_line]
    end = next((i for i in range(header + 1, len(lines)) if _HEADER.match(lines[i])), len(lines))
    block = lines[header + 1:end]
    pattern = _key_line(name)
    index = next((i for i, line in enumerate(block) if pattern.match(line)), None)
    if index is not None:
        block = block[:index] + ([new_line] if new_line else []) + block[index + 1:]
    elif new_line is not None:
        last = max((i for i, line in enumerate(block) if line.strip()), default=-1)
        block = block[:last + 1] + [new_line] + block[last + 1:]
    return lines[:header + 1] + block + lines[end:]


def update_config(values: dict[str, Value | None], path: Path | None = None) -> Path:
    """Set (or, with None, remove) settings, named by id (`base_url`, `local_model`)."""
    path = path or locations.config_file()
    try:
        old_text = locations.read_regular(path, MAX_CONFIG_BYTES).decode("utf-8") if path.exists() else ""
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else "it is not UTF-8 text"
        raise ConfigError(f"Cannot change {path}: {why}.", "Fix the file or move it away first; nothing was changed.") from exc
    try:
        before = tomllib.loads(old_text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"Cannot change {path}: it is not valid TOML ({exc}).", "Fix the file first; nothing was changed.") from exc
    lines = old_text.splitlines()
    for key, value in values.items():
        section, name = PLACES[key]
        if not isinstance(before.get(key), dict):  # `[backend]` is a section, not the old `backend = ...`
            lines = _drop_top(lines, key)
        lines = _set_in_table(lines, section.NAME, name, value)
    new_text = "\n".join(lines) + "\n"
    _check(before, new_text, values, path)
    # It may hold api_key: readable by the user only, like the folder it is in.
    return locations.write_private(path, new_text)


def _check(before: dict[str, Any], new_text: str, values: dict[str, Value | None], path: Path) -> None:
    expected = copy.deepcopy(before)
    for key, value in values.items():
        section, name = PLACES[key]
        if not isinstance(expected.get(key), dict):
            expected.pop(key, None)
        if value is None:
            if isinstance(expected.get(section.NAME), dict):
                expected[section.NAME].pop(name, None)
        else:
            expected.setdefault(section.NAME, {})[name] = value
    try:
        after = tomllib.loads(new_text)
    except tomllib.TOMLDecodeError:
        after = None
    if after != expected:
        wanted = "\n".join(f"[{PLACES[k][0].NAME}] {PLACES[k][1]} = {_literal(v)}" for k, v in values.items() if v is not None)
        raise ConfigError(
            f"Cannot change {path} safely (a value there spans several lines); nothing was changed.",
            f"Edit it by hand: {wanted or 'remove ' + ', '.join(values)}",
        )
