"""A card's regex scripts (`extensions.regex_scripts`, SillyTavern's Regex
extension), applied as SillyTavern's `public/scripts/extensions/regex/engine.js`
does (getRegexedString, runRegexScript), with one difference: what is stored
never changes. SillyTavern rewrites a message when it is sent or received with
the scripts that are neither "markdown only" nor "prompt only"; omoide keeps
what was typed and written, and applies those scripts both where the text is
shown and where it is sent.

- `placement`: 1 your messages, 2 the character's replies, 5 world info (only
  prompt-only scripts, at the entry's depth for an @D entry, as SillyTavern);
  3 (slash commands) and 6 (reasoning) have no text in omoide to apply to;
- `markdownOnly`: only what is shown; `promptOnly`: only what is sent;
- `disabled`; `minDepth` (-1 and up) / `maxDepth` (0 and up): a message's depth
  counts from the newest (0); scripts on neither side ignore depth, as
  SillyTavern runs them once, with no depth, when the message is stored;
- `findRegex`: `/pattern/flags` (flags g, i, m, s; u is RE2's own way; without
  g only the first match is replaced) or a bare pattern; run on RE2 (linear
  time); a script RE2 cannot compile is skipped, and `problems` says why;
- `substituteRegex`: 1 expands macros in the find pattern, 2 expands them with
  the names' regex characters escaped;
- `replaceString`: `{{match}}` and `$0` are the whole match, `$1`... capture
  groups (a group that did not match is empty), each with the `trimStrings`
  removed; then its macros are expanded.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from enum import IntEnum
from typing import Any, Literal

from omoide.characters.lore_match import linear_regex
from omoide.characters.macros import MacroEnv, expand

MAX_SCRIPTS = 200
"""Scripts read from one card at most; the rest are skipped with a notice."""
MAX_REPLACEMENTS = 10_000
"""Matches one script replaces in one text at most (a pattern that matches everywhere stays bounded)."""
MAX_OUTPUT_CHARS = 1_000_000
"""Characters one script may write into one text: past it, the rest of the text is kept as it was."""

View = Literal["shown", "sent"]


class Placement(IntEnum):
    USER_INPUT = 1
    AI_OUTPUT = 2
    SLASH_COMMAND = 3
    WORLD_INFO = 5
    REASONING = 6


@dataclass(frozen=True, slots=True)
class RegexScript:
    name: str
    find: Any
    """The compiled RE2 pattern."""
    find_text: str
    """As written after macros, for substituteRegex (compiled per text then)."""
    flags: str
    replace: str
    trim_strings: tuple[str, ...]
    placements: frozenset[int]
    markdown_only: bool
    prompt_only: bool
    min_depth: int | None
    max_depth: int | None
    substitute: int

    def runs(self, view: View, depth: int | None) -> bool:
        """Whether this script changes text for `view` at `depth` (None: no depth)."""
        both = not self.markdown_only and not self.prompt_only
        if not both and not (self.markdown_only and view == "shown") and not (self.prompt_only and view == "sent"):
            return False
        if both or depth is None:
            return True
        if self.min_depth is not None and self.min_depth >= -1 and depth < self.min_depth:
            return False
        return not (self.max_depth is not None and self.max_depth >= 0 and depth > self.max_depth)


@dataclass(frozen=True, slots=True)
class RegexScripts:
    scripts: tuple[RegexScript, ...] = ()
    problems: tuple[str, ...] = ()
    """Scripts skipped and why (a pattern RE2 cannot compile, a malformed script)."""

    def __bool__(self) -> bool:
        return bool(self.scripts)

    def apply(self, text: str, placement: Placement, view: View, *, depth: int | None = None,
              env: MacroEnv | None = None) -> str:
        """`text` as it is shown or sent, through every script that runs there, in order."""
        for script in self.scripts:
            if text and placement in script.placements and script.runs(view, depth):
                text = _run(script, text, env)
        return text


_WRITTEN = re.compile(r"^/([\s\S]+?)/([gimsuy]*)$")
_MATCH_MACRO = re.compile(r"\{\{match\}\}", re.IGNORECASE)
_GROUP = re.compile(r"\$(\d+)")
_REGEX_SPECIAL = re.compile(r"[\n\r\t\v\f\0.^$*+?{}\[\]\\/|()]")
_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v", "\f": "\\f", "\0": "\\0"}


def _int_or_none(value: object) -> int | None:
    if isinstance(value, bool) or value is None:
        return None
    try:
        return int(value)  # type: ignore[call-overload, no-any-return]
    except (TypeError, ValueError, OverflowError):
        return None


def _compile(written: str, name: str) -> tuple[Any, str] | str:
    """(pattern, flags) or why not. SillyTavern's regexFromString: `/p/flags`, else a bare pattern."""
    match = _WRITTEN.match(written)
    pattern, flags = (match.group(1), match.group(2)) if match else (written, "")
    if "y" in flags:
        return f"regex script {name!r} skipped: the sticky flag (y) is not supported"
    compiled = linear_regex(pattern, "".join(f for f in flags if f in "ims"), written)
    if isinstance(compiled, str):
        return f"regex script {name!r} skipped: {compiled}"
    return compiled, flags


def load_scripts(extensions: Mapping[str, Any]) -> RegexScripts:
    """The card's scripts, in order, and those skipped with why."""
    raw = extensions.get("regex_scripts")
    if not isinstance(raw, list):
        return RegexScripts()
    scripts: list[RegexScript] = []
    problems: list[str] = []
    for index, item in enumerate(raw):
        if index >= MAX_SCRIPTS:
            problems.append(f"{len(raw) - MAX_SCRIPTS} regex scripts after the first {MAX_SCRIPTS} skipped")
            break
        if not isinstance(item, dict):
            problems.append(f"regex script {index + 1} skipped: not an object")
            continue
        name = str(item.get("scriptName") or f"script {index + 1}")
        find = item.get("findRegex")
        if item.get("disabled") or not isinstance(find, str) or not find:
            continue
        substitute = _int_or_none(item.get("substituteRegex")) or 0
        compiled = _compile(find, name)
        if isinstance(compiled, str):
            if substitute:  # macros may make it valid: checked again when it runs
                compiled = (None, "")
            else:
                problems.append(compiled)
                continue
        placements = item.get("placement")
        trims = item.get("trimStrings")
        scripts.append(RegexScript(
            name=name, find=compiled[0], find_text=find, flags=compiled[1],
            replace=str(item.get("replaceString") or ""),
            trim_strings=tuple(str(t) for t in trims) if isinstance(trims, list) else (),
            placements=frozenset(p for p in (_int_or_none(p) for p in placements) if p is not None)
            if isinstance(placements, list) else frozenset(),
            markdown_only=bool(item.get("markdownOnly")), prompt_only=bool(item.get("promptOnly")),
            min_depth=_int_or_none(item.get("minDepth")), max_depth=_int_or_none(item.get("maxDepth")),
            substitute=substitute,
        ))
    return RegexScripts(tuple(scripts), tuple(problems))


def _escape_value(value: str) -> str:
    return _REGEX_SPECIAL.sub(lambda m: _ESCAPES.get(m.group(0), "\\" + m.group(0)), value)


def _find_with_macros(script: RegexScript, env: MacroEnv) -> Any:
    """substituteRegex 1 (raw) and 2 (the names escaped): the pattern after macros, or None."""
    if script.substitute == 2:
        env = replace(env, char=_escape_value(env.char), user=_escape_value(env.user),
                      group=tuple(_escape_value(g) for g in env.group))
    compiled = _compile(expand(script.find_text, env), script.name)
    return None if isinstance(compiled, str) else compiled[0]


def _run(script: RegexScript, text: str, env: MacroEnv | None) -> str:
    find = script.find
    if script.substitute in (1, 2) and env is not None:
        find = _find_with_macros(script, env)
    if find is None:
        return text
    template = _MATCH_MACRO.sub("$0", script.replace)
    out: list[str] = []
    end = written = 0
    for count, match in enumerate(find.finditer(text)):
        if count >= MAX_REPLACEMENTS or (count and "g" not in script.flags):
            break
        replacement = _replacement(template, match, script.trim_strings, env)
        written += len(replacement)
        if written > MAX_OUTPUT_CHARS:
            break
        out += [text[end:match.start()], replacement]
        end = match.end()
    if not out:
        return text
    out.append(text[end:])
    return "".join(out)


def _replacement(template: str, match: Any, trims: Iterable[str], env: MacroEnv | None) -> str:
    groups = int(match.re.groups) if hasattr(match, "re") else 0

    def group(found: re.Match[str]) -> str:
        number = int(found.group(1))
        value = match.group(number) if number <= groups else None
        if not value:
            return ""
        for trim in trims:
            value = value.replace(expand(trim, env) if env is not None else trim, "")
        return str(value)

    filled = _GROUP.sub(group, template)
    return expand(filled, env) if env is not None else filled
