"""Prompt templates for every LLM-driven memory step, overridable by the user.

A template is text with `{placeholder}` fields (`{{` and `}}` for literal
braces). The shipped defaults are registered here by the modules that use
them (a client listing them imports those modules first); a file `NAME.txt` in the config directory's `templates/` folder
overrides one. An override that names a placeholder the step does not
provide, or that cannot be parsed, is reported with the name of the culprit,
and the shipped default is used until it is fixed.
"""

from __future__ import annotations

import logging
import os
import shlex
import string
import subprocess
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from omoide import locations
from omoide.errors import ConfigError

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class TemplateSpec:
    name: str
    default: str
    placeholders: tuple[str, ...]
    summary: str


@dataclass(frozen=True, slots=True)
class Template:
    """The template in force for a step, and where it came from."""

    spec: TemplateSpec
    text: str
    source: str
    """'default', 'override', or 'default (override invalid)'."""
    problem: str | None = None

    @property
    def label(self) -> str:
        """How the update log names it: the name, and whether it was the user's copy."""
        return self.spec.name if self.source == "default" else f"{self.spec.name} ({self.source})"

    def render(self, **values: object) -> str:
        return render(self.spec, self.text, values)


REGISTRY: dict[str, TemplateSpec] = {}


class TemplateProblem(ConfigError):
    pass


def register(name: str, default: str, placeholders: tuple[str, ...], summary: str) -> TemplateSpec:
    spec = TemplateSpec(name, default, placeholders, summary)
    problem = check(spec, default)
    assert problem is None, f"shipped template {name}: {problem}"
    REGISTRY[name] = spec
    return spec


def templates_dir() -> Path:
    return locations.config_dir() / "templates"


def override_path(name: str) -> Path:
    return templates_dir() / f"{name}.txt"


def fields(text: str) -> list[str]:
    """The placeholder names in `text`; raises ValueError on unbalanced braces."""
    return [name for _, name, _, _ in string.Formatter().parse(text) if name is not None]


def fields_and_text(text: str) -> list[str]:
    """The literal pieces of a (valid) template, between its placeholders, split into lines."""
    return [line for literal, _, _, _ in string.Formatter().parse(text) for line in literal.splitlines()]


def check(spec: TemplateSpec, text: str) -> str | None:
    """None if `text` is usable for `spec`, else what is wrong with it."""
    try:
        names = fields(text)
    except ValueError as exc:
        return f"it cannot be read ({exc}); write literal braces as {{{{ and }}}}"
    known = ", ".join("{" + p + "}" for p in spec.placeholders)
    for name in names:
        if name not in spec.placeholders:
            shown = "{" + name + "}" if name else "{}"
            return f"it uses the unknown placeholder {shown} (known: {known})"
    return None


def get(name: str) -> Template:
    """The template in force: the user's override when it is valid, else the default."""
    spec = spec_for(name)
    path = override_path(name)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return Template(spec, spec.default, "default")
    except OSError as exc:
        unreadable = f"{path} cannot be read ({exc.strerror or exc})"
        log.warning("template %s: %s; using the shipped default", name, unreadable)
        return Template(spec, spec.default, "default (override invalid)", unreadable)
    text = from_file(spec, text)
    problem = check(spec, text)
    if problem is not None:
        log.warning("template %s (%s): %s; using the shipped default", name, path, problem)
        return Template(spec, spec.default, "default (override invalid)", problem)
    return Template(spec, text, "override")


def spec_for(name: str) -> TemplateSpec:
    spec = REGISTRY.get(name)
    if spec is None:
        raise TemplateProblem(f"There is no template named '{name}'.", f"Templates: {', '.join(sorted(REGISTRY))}.")
    return spec


def render(spec: TemplateSpec, text: str, values: dict[str, object]) -> str:
    missing = [p for p in spec.placeholders if p not in values]
    assert not missing, f"template {spec.name} rendered without {missing}"
    # Values are inserted once and never parsed again, so braces in them are safe.
    return text.format_map({k: v for k, v in values.items()})


def all_templates() -> list[Template]:
    """Every registered template (a client imports the modules that register them first)."""
    return [get(name) for name in sorted(REGISTRY)]


@dataclass(frozen=True, slots=True)
class Edited:
    """What `omoide templates edit` did."""

    path: Path
    changed: bool
    """The text differs from what the file held before the editor ran."""
    problem: str | None = None
    """Why the text cannot be used (the shipped default is used meanwhile)."""
    editor_failed: str | None = None
    """The editor did not exit cleanly: how (nothing it left is trusted as saved)."""


def edit(name: str) -> Edited:
    """Open your copy of a template in $EDITOR (a copy of the default, made for
    the purpose, the first time) and check what it leaves. A copy that ends up
    the same as the default is removed: it would be marked 'override' for nothing."""
    spec = spec_for(name)
    path = override_path(name)
    path.parent.mkdir(parents=True, exist_ok=True)
    made = not path.exists()
    if made:
        path.write_text(as_file(spec.default), encoding="utf-8")
    before = path.read_text(encoding="utf-8")
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    try:
        status = subprocess.run([*shlex.split(editor), str(path)], check=False).returncode
    except OSError as exc:
        if made:
            path.unlink(missing_ok=True)
        raise ConfigError(f"Cannot start the editor '{editor}': {exc.strerror or exc}.",
                          f"Set $EDITOR to your editor, or edit {path} directly.") from exc
    after = path.read_text(encoding="utf-8") if path.exists() else before
    if from_file(spec, after) == spec.default:
        path.unlink(missing_ok=True)  # the default, word for word: not an override
    failed = f"the editor '{editor}' exited with status {status}" if status != 0 else None
    changed = after != before
    problem = check(spec, from_file(spec, after)) if path.exists() else None
    return Edited(path, changed, problem, failed)


def as_file(text: str) -> str:
    """A template as a file holds it: ending with a newline, as text files do."""
    return text if text.endswith("\n") else text + "\n"


def from_file(spec: TemplateSpec, text: str) -> str:
    """A template read from its file: the newline that ends the file is not part
    of it when the default has none (a copy of the default renders the same)."""
    return text[:-1] if text.endswith("\n") and not spec.default.endswith("\n") else text


def reset(name: str) -> Path | None:
    """Go back to the shipped default. The override is kept beside it, renamed,
    so nothing the user wrote is lost. Returns where it went, or None."""
    spec_for(name)
    path = override_path(name)
    if not path.exists():
        return None
    kept = path.with_name(f"{path.name}.replaced-{datetime.now():%Y%m%d-%H%M%S}")
    path.rename(kept)
    return kept

