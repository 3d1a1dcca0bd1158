"""Just enough TOML writing for character files: strings, lists of strings,
integers and booleans, laid out for people to read and edit.

Multi-line text goes between ''' quotes (nothing to escape) unless it holds
''' itself or control characters, in which case it becomes an escaped
\"\"\" string. tomllib reads back exactly what was written, apart from the
newlines around multi-line text, which the loaders strip anyway.
"""

from __future__ import annotations

_SHORT_ESCAPES = {"\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r", '"': '\\"', "\\": "\\\\"}


def _is_control(ch: str) -> bool:
    return ch < " " or ch == "\x7f"


def _escape(text: str, *, keep_newlines: bool) -> str:
    out = []
    for ch in text:
        if keep_newlines and ch == "\n":
            out.append(ch)
        elif ch in _SHORT_ESCAPES:
            out.append(_SHORT_ESCAPES[ch])
        elif _is_control(ch):
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return "".join(out)


def string(value: str) -> str:
    """A TOML string literal for `value`."""
    if "\n" not in value and len(value) < 80:
        return '"' + _escape(value, keep_newlines=False) + '"'
    literal_ok = "'''" not in value and not any(
        _is_control(ch) and ch not in "\n\t" for ch in value
    )
    if literal_ok:
        return "'''\n" + value + "\n'''"
    return '"""\n' + _escape(value, keep_newlines=True) + '\n"""'


def value(item: str | bool | int | list[str]) -> str:
    if isinstance(item, bool):
        return "true" if item else "false"
    if isinstance(item, int):
        return str(item)
    if isinstance(item, str):
        return string(item)
    if any("\n" in s or len(s) > 60 for s in item):
        return "[\n" + "".join(f"    {string(s)},\n" for s in item) + "]"
    return "[" + ", ".join(string(s) for s in item) + "]"


def assignment(key: str, item: str | bool | int | list[str]) -> str:
    return f"{key} = {value(item)}"
