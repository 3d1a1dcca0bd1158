"""Property tests for the one helper that shows untrusted text."""

from __future__ import annotations

import io
import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from omoide.characters.model import substitute
from omoide.cli.say import StreamedText
from omoide.safe_text import inert, oneline, safe

anything = st.text(st.characters(codec="utf-8"), max_size=200)
hostile = st.lists(st.sampled_from(["\x1b", "]52;c;", "\x07", "[/]", "[bold]", "\r", "\n", "\t", "\x9b", "\x7f", "a", "é", "猫",
                                    "\u202e", "\u2067", "\u200f"]),
                   max_size=40).map("".join) | anything


BIDI = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
"""Embeddings, overrides and isolates: they reorder what is shown, so they are made visible too."""


def is_control(ch: str) -> bool:
    return unicodedata.category(ch) == "Cc" or ch in BIDI


@given(hostile)
def test_inert_text_holds_no_control_character_but_newline_and_tab(text: str) -> None:
    shown = inert(text)
    assert not any(is_control(ch) and ch not in "\n\t" for ch in shown)


@given(hostile)
def test_inert_is_idempotent_and_keeps_printable_text(text: str) -> None:
    shown = inert(text)
    assert inert(shown) == shown
    printable = "".join(ch for ch in text if not is_control(ch))
    assert "".join(ch for ch in shown if not is_control(ch) and ch not in "␀␁␂␃␄␅␆␇␈␋␌␎␏␐␑␒␓␔␕␖␗␘␙␚␛␜␝␞␟␡\ufffd") == printable.replace("\ufffd", "")  # noqa: E501


@given(hostile)
def test_each_control_character_stays_visible(text: str) -> None:
    # CR LF becomes one newline; every other control (but \n, \t) shows as one stand-in.
    normalised = text.replace("\r\n", "\n").replace("\r", "\n")
    assert len(inert(text)) == len(normalised)


@given(hostile)
def test_safe_text_is_never_markup_and_renders_without_escapes(text: str) -> None:
    rendered = safe(text)
    assert rendered.plain == inert(text)
    out = io.StringIO()
    Console(file=out, width=60, color_system=None, force_terminal=False).print(rendered, soft_wrap=True)
    assert "\x1b" not in out.getvalue() and "\x9b" not in out.getvalue()


@given(hostile, st.integers(min_value=1, max_value=80))
def test_oneline_is_one_inert_line_within_the_width(text: str, width: int) -> None:
    line = oneline(text, width)
    assert "\n" not in line and len(line) <= width and inert(line) == line


@given(st.lists(hostile, max_size=8))
def test_a_streamed_reply_shows_as_the_whole_reply_would(pieces: list[str]) -> None:
    stream = StreamedText()
    shown = "".join(stream.feed(p) for p in pieces) + stream.feed("", end=True)
    assert shown == inert("".join(pieces))


@given(hostile, hostile)
def test_names_are_substituted_literally(char: str, user: str) -> None:
    assert substitute("{{char}} and {{USER}} <BOT>", char=char, user=user) == f"{char} and {user} {char}"


@settings(deadline=None)  # the first Markdown parse is slow on a busy machine
@given(hostile)
def test_a_markdown_literal_renders_as_the_text_it_was(text: str) -> None:
    import html
    import re

    from markdown_it import MarkdownIt

    from omoide.safe_text import markdown_literal

    expected = " ".join(inert(text).split())
    if not expected:
        return
    rendered = MarkdownIt().renderInline(f"**{markdown_literal(text)}** · said")
    match = re.fullmatch(r"<strong>(.*)</strong> · said", rendered, re.DOTALL)
    assert match is not None, rendered
    assert html.unescape(match.group(1)) == expected


@given(st.lists(st.text(max_size=30), max_size=50), st.integers(min_value=0, max_value=10))
def test_some_names_at_most_limit_items_and_counts_the_rest(items: list[str], limit: int) -> None:
    from omoide.safe_text import some

    shown = some(items, limit=limit, width=12)
    left = len(items) - limit
    assert (f"and {left:,} more" in shown) == (left > 0)
    assert len(shown) <= limit * 14 + 40
    assert not any(is_control(ch) for ch in shown)
