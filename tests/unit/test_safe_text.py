"""Property tests for the one helper that shows untrusted text."""

from __future__ import annotations

import io
import unicodedata

from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console

from omoide.characters.model import substitute
from omoide.cli.app import StreamedText
from omoide.safe_text import inert, oneline, safe

anything = st.text(st.characters(codec="utf-8"), max_size=200)
hostile = st.lists(st.sampled_from(["\x1b", "]52;c;", "\x07", "[/]", "[bold]", "\r", "\n", "\t", "\x9b", "\x7f", "a", "é", "猫"]),
                   max_size=40).map("".join) | anything


def is_control(ch: str) -> bool:
    return unicodedata.category(ch) == "Cc"


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
