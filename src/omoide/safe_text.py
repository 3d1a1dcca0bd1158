"""Showing untrusted text: model output, cards, lorebooks, chat files, server
errors, anything read back from the database.

`inert(text)` is what may reach a terminal: line endings normalised to "\\n",
tab and newline kept, every other control character (C0, DEL, C1) replaced by
a visible stand-in, so ESC can never start an escape sequence (OSC 52 clipboard
writes, window titles, links, screen clears), and a bidi override can never
make text show in another order than it was written. `safe(text)` is the same as a
rich `Text`, which is never parsed as markup. Stored text is never changed:
these are for display only.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from rich.text import Text

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.rules_core import StateCore

_NEWLINES = re.compile(r"\r\n?")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
"""C0 but tab and newline, DEL, C1, and the bidi embeddings, overrides and isolates
(U+202A-U+202E, U+2066-U+2069): those reorder what follows them on screen, so a
name could show as another ('Trojan Source'). The marks LRM, RLM and ALM stay."""


def _visible(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x20:
        return chr(0x2400 + code)  # the Control Pictures block: ESC shows as ␛
    if code == 0x7F:
        return "\u2421"  # ␡
    return "\ufffd"  # C1 and bidi controls have no picture


def inert(text: str) -> str:
    """`text` with CRLF/CR as newlines and every other control character made visible."""
    return _CONTROL.sub(_visible, _NEWLINES.sub("\n", text))


_JSON_RAW_CONTROLS = re.compile("[\x7f-\x9f\u2028\u2029]")


def json_text(value: Any, *, indent: int | None = None) -> str:
    """`value` as JSON with non-ASCII kept readable and every control character
    escaped: for anything omoide prints or writes as JSON. `json.dumps(...,
    ensure_ascii=False)` escapes C0 controls but writes DEL and the 8-bit C1
    controls (CSI, OSC among them) raw, and a terminal acts on those when the
    JSON is printed or `cat`; here each is a \\u escape, the same JSON to a parser."""
    text = json.dumps(value, ensure_ascii=False, indent=indent)
    # Outside strings JSON has only ASCII punctuation, so these can only be in strings.
    return _JSON_RAW_CONTROLS.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def safe(text: str, style: str = "") -> Text:
    """Untrusted text as a rich Text: shown as typed, never as markup or escapes."""
    return Text(inert(text), style=style)


def oneline(text: str, width: int | None = None) -> str:
    """Inert text on one line (whitespace runs become one space), cut to `width`."""
    flat = " ".join(inert(text).split())
    if width is not None and len(flat) > width:
        return flat[: max(width - 1, 0)] + "…"
    return flat


def some(items: Sequence[str], *, limit: int, width: int = 80, noun: str = "") -> str:
    """At most `limit` of `items`, each inert and cut to `width`, joined on one
    line, with how many were left out: a list a server sent stays readable
    whatever its length."""
    shown = ", ".join(oneline(item, width) for item in items[:limit])
    left = len(items) - limit
    return f"{shown} and {left:,} more{' ' + noun if noun else ''}" if left > 0 else shown


def highlighted(marked: str, start: str, end: str, style: str = "bold yellow") -> Text:
    """A search snippet whose matches lie between the `start` and `end` markers:
    the matches in `style`, everything inert and shown as typed (brackets included)."""
    text = Text()
    for i, part in enumerate(re.split(f"{re.escape(start)}|{re.escape(end)}", marked)):
        text.append(inert(part), style=style if i % 2 else "")
    return text


_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]<>#|~&!])")


def markdown_literal(text: str) -> str:
    """`text` (a name, a title) to put into Markdown, escaped so that it reads as
    typed: a trailing backslash cannot escape what follows it, and `*`, `_` or
    `[` in a name cannot start emphasis or a link."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", " ".join(inert(text).split()))



_written: MarkdownIt | None = None


def as_written_markdown() -> MarkdownIt:
    """The Markdown parser for text someone wrote (a message, a diary, a summary):
    it may style the text but never removes a character of it. Markdown's own
    rules would: a single newline joins two lines, `\\;` loses its backslash,
    `&amp;` becomes `&`, `<http://x>` loses its brackets, raw HTML (`<grins>`) and
    a line like `[OOC]: note` (a link definition) vanish. Here a newline is a line
    break (SillyTavern's "show newlines"), and backslash escapes, entities,
    autolinks, HTML and link definitions are off; emphasis, code, lists, quotes,
    headings and tables still style. One parser for every message: building one
    costs more than parsing a message, and parsing keeps no state between calls."""
    global _written
    if _written is None:
        from markdown_it import MarkdownIt

        parser = MarkdownIt("gfm-like", options_update={"html": False})
        parser.disable(["escape", "entity", "autolink", "html_inline", "html_block", "reference"])
        parser.core.ruler.push("line_breaks", _line_breaks)
        _written = parser
    return _written


def _line_breaks(state: StateCore) -> None:
    """Every single newline inside a paragraph is a line break, as written."""
    for token in state.tokens:
        for child in token.children or ():
            if child.type == "softbreak":
                child.type, child.tag = "hardbreak", "br"
