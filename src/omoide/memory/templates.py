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
import re
import string
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from omoide import locations
from omoide.config.editor import open_in_editor
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
        """The prompt; a user's copy that fails here (checked again, or a format
        that does not fit its value) gives way to the shipped default, and says so."""
        if self.source != "override":
            return render(self.spec, self.text, values)
        try:
            problem = check(self.spec, self.text)
            if problem is None:
                return render(self.spec, self.text, values)
        except (ValueError, TypeError, KeyError, AttributeError, IndexError) as exc:
            problem = f"it cannot be filled in ({exc})"
        fall_back(self.spec.name, problem)
        return render(self.spec, self.spec.default, values)


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


MAX_PAD = 100
"""Widest a placeholder may be padded (`{name:>20}`), and the most digits a number
may be written with: a template makes a prompt, not a 300 MB string."""
MAX_TEMPLATE_BYTES = 1024 * 1024
"""The most read of a template override (the shipped ones are under 2 KiB)."""
_SPEC = re.compile(r"(?:.?[<>=^])?[-+ ]?z?#?0?(?P<width>\d*)[,_]?(?:\.(?P<precision>\d+))?[bcdeEfFgGnosxX%]?")
"""Python's format-spec mini-language, with no nested {field} in it."""


def _spec_problem(shown: str, conversion: str | None, spec: str) -> str | None:
    if conversion not in (None, "s", "r", "a"):
        return f"{shown} has the unknown conversion !{conversion}"
    if not spec:
        return None
    if "{" in spec or "}" in spec:
        return f"{shown} has a placeholder inside its format ({spec}); only plain formats like {{name:>10}} are allowed"
    match = _SPEC.fullmatch(spec)
    if match is None:
        return f"{shown} has a format omoide does not accept ({spec})"
    if int(match["width"] or 0) > MAX_PAD or int(match["precision"] or 0) > MAX_PAD:
        return f"{shown} pads or extends it past {MAX_PAD} characters ({spec})"
    return None


def check(spec: TemplateSpec, text: str) -> str | None:
    """None if `text` is usable for `spec`, else what is wrong with it: only the
    step's own placeholders, each plain or with a small format (no attribute or
    index lookups, no placeholder inside a format, no padding past MAX_PAD)."""
    try:
        parsed = [(name, conversion, fmt) for _, name, fmt, conversion in string.Formatter().parse(text) if name is not None]
    except ValueError as exc:
        return f"it cannot be read ({exc}); write literal braces as {{{{ and }}}}"
    known = ", ".join("{" + p + "}" for p in spec.placeholders)
    for name, conversion, fmt in parsed:
        shown = "{" + name + "}" if name else "{}"
        if name not in spec.placeholders:
            return f"it uses the unknown placeholder {shown} (known: {known})"
        problem = _spec_problem(shown, conversion, fmt or "")
        if problem is not None:
            return f"it cannot be used: {problem}"
    return None


def get(name: str) -> Template:
    """The template in force: the user's override when it is valid, else the default."""
    spec = spec_for(name)
    path = override_path(name)
    try:
        text = locations.read_regular(path, MAX_TEMPLATE_BYTES).decode("utf-8")
    except FileNotFoundError:
        return Template(spec, spec.default, "default")
    except OSError as exc:
        unreadable = f"{path} cannot be read ({exc.strerror or exc})"
        log.warning("template %s: %s; using the shipped default", name, unreadable)
        return Template(spec, spec.default, "default (override invalid)", unreadable)
    text = from_file(spec, text)
    problem = check(spec, text)
    if problem is not None:
        fall_back(name, problem)
        return Template(spec, spec.default, "default (override invalid)", problem)
    return Template(spec, text, "override")


_notices: dict[Path, str] = {}


def fall_back(name: str, problem: str) -> None:
    """Log that the user's copy of template `name` is not used, and keep a notice
    for the user (`take_notices`)."""
    path = override_path(name)
    log.warning("template %s (%s): %s; using the shipped default", name, path, problem)
    _notices[path] = (f"Your template {name} is not used: {problem}. The shipped default is used until it is fixed "
                      f"(`omoide templates edit {name}`).")


def take_notices() -> list[str]:
    """The notices kept since the last call about the templates in force now
    (the config directory can change between calls in tests), for the TUI or stderr."""
    folder = templates_dir()
    notices = [note for path, note in _notices.items() if path.parent == folder]
    _notices.clear()
    return notices


def spec_for(name: str) -> TemplateSpec:
    spec = REGISTRY.get(name)
    if spec is None:
        raise TemplateProblem(f"There is no template named '{name}'.", f"Templates: {', '.join(sorted(REGISTRY))}.")
    return spec


def render(spec: TemplateSpec, text: str, values: dict[str, object]) -> str:
    missing = [p for p in spec.placeholders if p not in values]
    assert not missing, f"template {spec.name} rendered without {missing}"
    # Values are inserted once and never parsed again, so braces in them are safe.
    return text.format_map({k: v for k, v in values.items() if k in spec.placeholders})


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
    made = not path.exists()
    if made:
        locations.write_private(path, as_file(spec.default))
    before = path.read_text(encoding="utf-8")
    try:
        failed = open_in_editor(path)
    except ConfigError:
        if made:
            path.unlink(missing_ok=True)
        raise
    after = path.read_text(encoding="utf-8") if path.exists() else before
    if from_file(spec, after) == spec.default:
        path.unlink(missing_ok=True)  # the default, word for word: not an override
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

