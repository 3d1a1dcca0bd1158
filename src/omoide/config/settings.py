"""Settings, in sections (`omoide.config.sections`): built-in defaults, then the
TOML file, then OMOIDE_* environment variables, then keyword arguments
(highest). The API key is read from here and nowhere else; it is never written
to the database, the logs or an export.

config.toml holds each setting in its section (`[memory] summary_threshold`).
A file from before the sections, with the same keys at its top, still works:
each such key is read, and `config_warnings` names its new place.

Standard library only (no pydantic): every launch of omoide imports this."""

from __future__ import annotations

import os
from typing import Any

from omoide import locations
from omoide.config.fields import Range, SettingsError, fields_of, from_environment, read_toml
from omoide.config.secret import Secret
from omoide.config.sections import (
    SECTIONS, BackendKind, BackendSettings, EmbeddedSettings, MemorySettings, ModelsSettings, SceneSettings,
    Section, StoreSettings, SummarizerSettings, UISettings, UserSettings, WorldSettings, places,
)
from omoide.errors import ConfigError

__all__ = ["BackendKind", "Range", "Secret", "Settings", "SettingsError", "config_warnings", "ignored_config_keys", "load_settings"]

PLACES = places()
"""Every setting's id -> (its section, its name there)."""


def place(key: str) -> str:
    """Where the setting with id `key` lives in config.toml, e.g. '[memory] summary_threshold'."""
    section, name = PLACES[key]
    return f"[{section.NAME}] {name}"


def _flat(config: dict[str, Any], key: str) -> tuple[bool, object]:
    """A setting written at the top of the file, as before the sections."""
    if key not in config:
        return False, None
    value = config[key]
    if isinstance(value, dict) and any(s.NAME == key for s in SECTIONS):
        return False, None  # `[backend]` is the section, not the old `backend = "..."`
    return True, value


class Settings:
    """`Settings(**overrides)` reads, highest first: the keyword arguments (by id,
    such as summary_threshold=30), OMOIDE_* variables, the config file, the
    defaults; unknown keywords are ignored, and every problem is raised at once
    as a SettingsError naming the setting's place."""

    backend: BackendSettings
    summarizer: SummarizerSettings
    embedded: EmbeddedSettings
    models: ModelsSettings
    memory: MemorySettings
    world: WorldSettings
    scene: SceneSettings
    user: UserSettings
    ui: UISettings
    store: StoreSettings

    def __init__(self, **overrides: object) -> None:
        environment = from_environment(os.environ, "OMOIDE_")
        config = read_toml(locations.config_file())
        problems: list[str] = []
        given: set[str] = set()
        values: dict[str, dict[str, object]] = {section.NAME: {} for section in SECTIONS}
        for key, (section, name) in PLACES.items():
            field = fields_of(section)[name]
            table = config.get(section.NAME)
            in_table = isinstance(table, dict) and name in table
            flat, flat_value = _flat(config, key)
            try:
                if key in overrides:
                    value = field.check(overrides[key])
                elif key in environment:
                    value = field.parse(environment[key])
                elif in_table:
                    value = field.check(table[name])  # type: ignore[index]
                elif flat:
                    value = field.check(flat_value)
                else:
                    continue
            except ValueError as exc:
                source = f" (OMOIDE_{key.upper()})" if key not in overrides and key in environment else ""
                problems.append(f"{place(key)}{source}: {exc}")
                continue
            given.add(key)
            values[section.NAME][name] = value
        if problems:
            raise SettingsError(problems)
        for section in SECTIONS:
            setattr(self, section.NAME, section(**values[section.NAME]))
        self._given: frozenset[str] = frozenset(given)

    @classmethod
    def ids(cls) -> tuple[str, ...]:
        """Every setting's id, section by section."""
        return tuple(PLACES)

    def is_set(self, key: str) -> bool:
        """Whether the setting `key` (an id) was given (a keyword, an OMOIDE_*
        variable, the config file or `updated`) rather than left at its default."""
        return key in self._given

    def updated(self, **changes: object) -> Settings:
        """A copy with `changes` (by id) checked and applied; the environment and
        the config file are not read again."""
        copy = object.__new__(type(self))
        problems: list[str] = []
        fresh: dict[str, dict[str, object]] = {}
        for key, value in changes.items():
            if key not in PLACES:
                problems.append(f"{key}: there is no setting with this name")
                continue
            section, name = PLACES[key]
            try:
                fresh.setdefault(section.NAME, {})[name] = fields_of(section)[name].check(value)
            except ValueError as exc:
                problems.append(f"{place(key)}: {exc}")
        if problems:
            raise SettingsError(problems)
        for section in SECTIONS:
            old: Section = getattr(self, section.NAME)
            kept = {name: getattr(old, name) for name in fields_of(section)}
            setattr(copy, section.NAME, section(**{**kept, **fresh.get(section.NAME, {})}))
        copy._given = self._given | changes.keys()
        return copy

    def __repr__(self) -> str:
        return f"Settings({', '.join(repr(getattr(self, s.NAME)) for s in SECTIONS)})"

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and all(getattr(self, s.NAME) == getattr(other, s.NAME) for s in SECTIONS)

    def summarizer_settings(self) -> Settings:
        """The settings for the memory-work backend: the chat's, with [summarizer] on top."""
        s = self.summarizer
        if not (s.kind or s.base_url or s.model):
            return self
        update: dict[str, object] = {}
        if s.kind:
            update["backend"] = s.kind
        if s.base_url:
            update["base_url"] = s.base_url
        if s.model:
            update["model"] = s.model
        if s.api_key:
            update["api_key"] = s.api_key
        return self.updated(**update)


def config_warnings() -> list[str]:
    """What in the config file omoide reads differently from how it is written:
    an unknown key (a typo is otherwise ignored without a word), named with the
    closest known one, and a key at the top of the file whose place is now a
    section."""
    return [text for text, _ignored in _config_findings()]


def ignored_config_keys() -> list[str]:
    """The config file's keys omoide ignores (unknown ones), each named with the
    closest known one; a flat key it still reads is not among them."""
    return [text for text, ignored in _config_findings() if ignored]


def _config_findings() -> list[tuple[str, bool]]:
    """(what to say, whether the key is ignored) for every key of the config
    file that is unknown or in its old flat place."""
    import difflib

    path = locations.config_file()
    try:
        data = read_toml(path)
    except (OSError, ValueError):
        return []  # missing, or unreadable: load_settings says so
    sections = {section.NAME: section for section in SECTIONS}
    known = [*PLACES, *sections]
    findings: list[tuple[str, bool]] = []
    for key, value in data.items():
        if key in sections and isinstance(value, dict):
            names = list(fields_of(sections[key]))
            for name in value:
                if name not in names:
                    close = difflib.get_close_matches(name.lower(), names, n=1, cutoff=0.6)
                    hint = f" Did you mean '{close[0]}'?" if close else f" The keys of [{key}] are: {', '.join(names)}."
                    findings.append((f"Unknown setting '{name}' in [{key}] of {path} is ignored.{hint}", True))
        elif key in PLACES:
            findings.append((f"'{key}' at the top of {path} is read; its place is now {place(key)}.", False))
        else:
            close = difflib.get_close_matches(key.lower(), known, n=1, cutoff=0.6)
            hint = f" Did you mean '{close[0]}'?" if close else " docs/configuration.md lists every setting."
            findings.append((f"Unknown setting '{key}' in {path} is ignored.{hint}", True))
    return findings


def load_settings(**overrides: object) -> Settings:
    """Read the settings, turning any problem into a ConfigError that names it."""
    path = locations.config_file()
    try:
        return Settings(**overrides)
    except SettingsError as exc:
        raise ConfigError(
            f"The settings are not valid ({'; '.join(exc.problems)}).",
            f"Fix {path} or the OMOIDE_* environment variables.",
        ) from exc
    except OSError as exc:  # unreadable, a device, too big
        raise ConfigError(f"Cannot read the config file {path}: {exc.strerror or exc}.",
                          "Check its permissions, or move it away to start from the defaults.") from exc
    except Exception as exc:  # tomllib.TOMLDecodeError
        raise ConfigError(
            f"Cannot read the config file {path}: {exc}.",
            "Fix its TOML syntax, or move it away to start from the defaults.",
        ) from exc
