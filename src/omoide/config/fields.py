"""The typed fields behind Settings, read from its annotations: each field's
type, default and checks, how a value from the environment (text) is parsed,
and how a value from the TOML file or a keyword argument is checked.

Standard library only: `omoide chat` pays for every import at start-up (so
NamedTuple, not dataclasses, which imports inspect).
"""

from __future__ import annotations

import math
import types
import typing
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from omoide import locations

TRUE = frozenset({"true", "1", "yes", "on"})
FALSE = frozenset({"false", "0", "no", "off"})
MAX_CONFIG_BYTES = 16 * 1024 * 1024
"""The most read of a config file (a real one is a few KiB)."""


class SettingsError(ValueError):
    """Every problem found in the settings, each as 'name: what is wrong'."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


class Range(NamedTuple):
    """Bounds of a number field: ge/le inclusive, gt/lt exclusive."""

    ge: float | None = None
    gt: float | None = None
    le: float | None = None
    lt: float | None = None

    def __call__(self, value: float) -> float:
        # Written as `not (value >= bound)` so that NaN fails every bound.
        if self.ge is not None and not value >= self.ge:
            why = f"below the minimum {self.ge}"
        elif self.gt is not None and not value > self.gt:
            why = f"not above {self.gt}"
        elif self.le is not None and not value <= self.le:
            why = f"above the maximum {self.le}"
        elif self.lt is not None and not value < self.lt:
            why = f"not below {self.lt}"
        else:
            return value
        allowed = [f"{word} {bound}" for word, bound in
                   (("at least", self.ge), ("above", self.gt), ("at most", self.le), ("below", self.lt)) if bound is not None]
        both = f" — it must be {' and '.join(allowed)}" if len(allowed) > 1 else ""
        raise ValueError(f"{value!r} is {why}{both}")


class Field(NamedTuple):
    name: str
    kind: type
    """bool, int, float, str, list (of str), dict (str to str), or a class built
    from a str (Path, Secret)."""
    default: object
    optional: bool = False
    choices: tuple[str, ...] = ()
    checks: tuple[Callable[[Any], Any], ...] = ()

    def fresh_default(self) -> object:
        """The default, copied when it is a list or dict so no two objects share it."""
        return self.default.copy() if isinstance(self.default, (list, dict)) else self.default

    def parse(self, text: str) -> object:
        """A value from the environment, where everything is text."""
        if self.optional and text == "" and (self.kind is not str or self.choices):
            return None
        if self.kind is bool:
            word = text.strip().lower()
            if word not in TRUE | FALSE:
                raise ValueError(f"{text!r} is not true or false (use true/false, 1/0, yes/no or on/off)")
            return self.check(word in TRUE)
        if self.kind in (int, float):
            try:
                number: object = self.kind(text)
            except ValueError:
                raise ValueError(f"{text!r} is not {'a whole number' if self.kind is int else 'a number'}") from None
            return self.check(number)
        if self.kind in (list, dict):
            import json

            try:
                return self.check(json.loads(text))
            except json.JSONDecodeError as exc:
                example = '["http://127.0.0.1:11434"]' if self.kind is list else '{"name": "text"}'
                raise ValueError(f"{text!r} is not valid JSON ({exc.msg}); write it like {example}") from None
        return self.check(text)

    def check(self, value: object) -> object:
        """A value from the TOML file or a keyword argument: the right type, in range."""
        if value is None:
            if self.optional:
                return None
            raise ValueError("a value is required here (None is not allowed)")
        if isinstance(value, str) and self.kind in (bool, int, float) and not self.choices:
            return self.parse(value)  # `temperature = "0.8"` in TOML: read as the environment's text is
        value = self._typed(value)
        for check in self.checks:
            value = check(value)
        return value

    def _typed(self, value: object) -> object:
        kind = self.kind
        if self.choices:
            if isinstance(value, str) and value in self.choices:
                return value
            raise ValueError(f"{value!r} is not one of {', '.join(self.choices)}")
        if kind is bool:
            if isinstance(value, bool):
                return value
            raise ValueError(f"{value!r} is not true or false")
        if kind is int:
            if isinstance(value, int) and not isinstance(value, bool):
                return value
            if isinstance(value, float) and value.is_integer():
                return int(value)
            raise ValueError(f"{value!r} is not a whole number")
        if kind is float:
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                if not math.isfinite(value):
                    raise ValueError(f"{value!r} is not a finite number")
                return float(value)
            raise ValueError(f"{value!r} is not a number")
        if kind is str:
            if isinstance(value, str):
                return value
            raise ValueError(f"{value!r} is not a string")
        if kind is list:
            if isinstance(value, (list, tuple)) and all(isinstance(item, str) for item in value):
                return list(value)
            raise ValueError(f"{value!r} is not a list of strings")
        if kind is dict:
            if isinstance(value, Mapping) and all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
                return dict(value)
            raise ValueError(f"{value!r} is not a table of strings")
        if isinstance(value, kind):
            return value
        if isinstance(value, str):
            return kind(value)
        # Not echoed: the field may hold a secret.
        raise ValueError(f"expected a string, not {type(value).__name__}")


def _describe(name: str, hint: object, default: object) -> Field:
    checks: tuple[Callable[[Any], Any], ...] = ()
    if typing.get_origin(hint) is typing.Annotated:
        hint, *extras = typing.get_args(hint)
        checks = tuple(extras)
    optional = False
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        args = [arg for arg in typing.get_args(hint) if arg is not type(None)]
        optional = len(args) < len(typing.get_args(hint))
        (hint,) = args
    if typing.get_origin(hint) is typing.Literal:
        return Field(name, str, default, optional, tuple(typing.get_args(hint)), checks)
    kind = typing.get_origin(hint) or hint
    if kind in (list, dict) and set(typing.get_args(hint)) != {str}:
        raise TypeError(f"{name}: only list[str] and dict[str, str] are supported, not {hint}")
    if not isinstance(kind, type):
        raise TypeError(f"{name}: unsupported type {hint}")
    return Field(name, kind, default, optional, (), checks)


_FIELDS: dict[str, dict[str, Field]] = {}


def fields_of(cls: type) -> dict[str, Field]:
    """The fields of a settings class, in the order they are declared: every
    annotated class attribute but a ClassVar, with its value as the default. Read once."""
    key = f"{cls.__module__}.{cls.__qualname__}"
    if key not in _FIELDS:
        hints = typing.get_type_hints(cls, include_extras=True)
        _FIELDS[key] = {name: _describe(name, hint, getattr(cls, name)) for name, hint in hints.items()
                        if typing.get_origin(hint) is not typing.ClassVar}
    return _FIELDS[key]


def read_toml(path: Path) -> dict[str, object]:
    """The TOML file's table; a missing file has no values."""
    try:
        data = locations.read_regular(path, MAX_CONFIG_BYTES)
    except FileNotFoundError:
        return {}
    import tomllib

    return tomllib.loads(data.decode("utf-8"))


def from_environment(environ: Mapping[str, str], prefix: str) -> dict[str, str]:
    """PREFIX_NAME variables by lower-case name (prefix and name in any case)."""
    size = len(prefix)
    return {key[size:].lower(): value for key, value in environ.items() if key[:size].lower() == prefix.lower()}
