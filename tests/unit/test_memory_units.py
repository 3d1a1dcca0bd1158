"""The diary's inline form, summary validation, compression chunking, slash commands."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from omoide.tui.slash import COMMANDS, parse
from omoide.domain.chat import Message, Role
from omoide.errors import CommandError
from omoide.memory.diary import InlineMemoryFilter, strip_inline_tags
from omoide.memory.summary import (
    SEGMENT_MIN_TOKENS, SUMMARY_MAX_TOKENS, InvalidSummary, segment_tokens, split_for_compression, validate_summary,
    whole_sentences,
)
from omoide.chat.reply import LeadingStampFilter
from omoide.llm.stamps import strip_leading_stamp

REPLY = "*smiles* Fine.<save_memory>He kept his promise about the café.</save_memory> See you tomorrow."


def test_inline_tags_are_taken_out_of_the_reply_and_saved() -> None:
    visible, entries = strip_inline_tags(REPLY)
    assert visible == "*smiles* Fine. See you tomorrow."
    assert entries == ["He kept his promise about the café."]


@given(st.lists(st.integers(min_value=1, max_value=len(REPLY)), max_size=12))
def test_any_split_of_the_stream_gives_the_same_text_and_entries(cuts: list[int]) -> None:
    points = sorted(set(cuts))
    chunks = [REPLY[a:b] for a, b in zip([0, *points], [*points, len(REPLY)], strict=True)]
    f = InlineMemoryFilter()
    visible, entries = "", []
    for chunk in chunks:
        v, e = f.feed(chunk)
        visible += v
        entries += e
    v, e = f.flush()
    assert (visible + v, entries + e) == ("*smiles* Fine. See you tomorrow.", ["He kept his promise about the café."])


def test_a_tag_never_flickers_on_screen() -> None:
    f = InlineMemoryFilter()
    shown = "".join(f.feed(c)[0] for c in "ok <save_mem")
    assert "<" not in shown


def test_an_unclosed_tag_at_the_end_still_saves_the_entry() -> None:
    assert strip_inline_tags("Sure.<save_memory>He likes rain") == ("Sure.", ["He likes rain"])


def test_a_lone_angle_bracket_is_shown() -> None:
    assert strip_inline_tags("3 < 4 and <b>") == ("3 < 4 and <b>", [])


GOOD = "Kai found the café Sakura had mentioned and loved the matcha latte. She pretended not to care, but promised to save him a seat on Friday."


def test_a_real_summary_is_accepted() -> None:
    assert validate_summary(GOOD, name="Sakura", user="Kai") == GOOD


@pytest.mark.parametrize(
    "text",
    [
        "",
        "Too short.",
        "*smiles softly* Oh, you came back! I was hoping you would, you know. Sit down, I'll bring the usual.",
        "Sakura: Welcome back! I saved your seat, just like I promised you I would on Friday.",
        "Hello! I'm so glad you asked. I think I remember everything we talked about, and I loved it.",
        "I missed you. I kept thinking about what I said and I wonder if I was too harsh with my words, I'm sorry.",
    ],
)
def test_a_chat_reply_is_not_taken_for_a_summary(text: str) -> None:
    with pytest.raises(InvalidSummary):
        validate_summary(text, name="Sakura", user="Kai")


def window(n: int) -> list[Message]:
    return [Message(id=i, chat_id=1, parent_id=None, role=Role.USER, content=str(i), created_at=datetime.now(UTC)) for i in range(n)]


def test_compression_starts_past_the_threshold_and_keeps_the_recent_window() -> None:
    assert split_for_compression(window(20), threshold=20, keep_recent=15) == []
    chunk = split_for_compression(window(21), threshold=20, keep_recent=15)
    assert [m.id for m in chunk] == list(range(6))


def test_an_imitated_timestamp_is_stripped_from_a_reply() -> None:
    assert strip_leading_stamp("[04/02 09:15] *yawns* Morning.") == "*yawns* Morning."
    assert strip_leading_stamp("*yawns* [not a stamp]") == "*yawns* [not a stamp]"
    # Gemma 3 270M's imitations, from a memory check run
    assert strip_leading_stamp("[03/12 19h”]I haven't talked with anyone") == "I haven't talked with anyone"
    assert strip_leading_stamp("[8th October], September") == ", September"
    assert strip_leading_stamp("[03/11 18h]: Can I borrow his car?") == "Can I borrow his car?"
    assert strip_leading_stamp("[5/11/21] Fine.") == "Fine."
    assert strip_leading_stamp("[1] is the first footnote") == "[1] is the first footnote"
    assert strip_leading_stamp("[OOC: 2 minutes] brb") == "[OOC: 2 minutes] brb"


def test_a_streamed_reply_is_held_back_only_while_it_may_open_with_a_stamp() -> None:
    plain = LeadingStampFilter()
    assert plain.feed("Hi") == "Hi", "no bracket, no wait: the first word shows as it comes"
    stamped = LeadingStampFilter()
    assert stamped.feed("[03/12 19h") == ""
    assert stamped.feed("] Hello") == "Hello"
    assert stamped.feed(" there") == " there"


def test_plain_text_is_not_a_command() -> None:
    assert parse("hello there") is None
    assert parse("//shrug") is None


def test_commands_parse_with_arguments() -> None:
    cmd = parse("/remember  He hates   thunder ")
    assert cmd is not None and cmd.name == "remember" and cmd.raw_args == "He hates   thunder"
    branch = parse('/branch save "before confession"')
    assert branch is not None and branch.args == ["save", "before confession"]


def test_an_unknown_command_suggests_the_nearest() -> None:
    with pytest.raises(CommandError) as info:
        parse("/hepl")
    assert "Unknown command /hepl" in info.value.message and "/help" in info.value.hint
    with pytest.raises(CommandError) as info:
        parse("/brnch save x")
    assert "/branch" in info.value.hint


def test_every_command_has_usage_and_summary() -> None:
    assert all(spec.usage.startswith("/") and spec.summary for spec in COMMANDS.values())


@given(st.text(max_size=60))
def test_any_typed_line_parses_or_gets_a_clear_command_error(line: str) -> None:
    try:
        parsed = parse(line)
    except CommandError as exc:
        assert exc.message and exc.hint
        return
    if parsed is None:
        assert not line.strip().startswith("/") or line.strip().startswith("//")
    else:
        assert parsed.name in COMMANDS and line.strip().startswith("/")


@given(st.sampled_from(sorted(COMMANDS)), st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc")), max_size=40))
def test_every_command_keeps_its_arguments_as_typed(name: str, rest: str) -> None:
    parsed = parse(f"/{name} {rest}")
    assert parsed is not None and parsed.name == name and parsed.raw_args == rest.strip()


def _said(*texts: str) -> list[Message]:
    return [Message(id=i, chat_id=1, parent_id=None, role=Role.USER, content=t, created_at=datetime.now(UTC))
            for i, t in enumerate(texts)]


def test_the_next_part_of_a_summary_is_about_as_long_as_what_it_folds_in() -> None:
    assert segment_tokens(_said("Hi.", "Tea?")) == SEGMENT_MIN_TOKENS  # six one-liners still get room for two paragraphs
    assert segment_tokens(_said("word " * 400)) == 501  # 2,000 characters: about 500 tokens
    assert segment_tokens(_said("word " * 4000)) == SUMMARY_MAX_TOKENS


def test_a_part_cut_off_by_its_limit_ends_at_its_last_whole_sentence() -> None:
    assert whole_sentences("Kai and Mika talked. She smiled and") == "Kai and Mika talked."
    assert whole_sentences('They met. "It is fine." He') == 'They met. "It is fine."'
    assert whole_sentences("[11/26 11:47] Mika baked. Then") == "[11/26 11:47] Mika baked."
    assert whole_sentences("All of it was said.\n") == "All of it was said."
    assert whole_sentences("no sentence ends here") == "no sentence ends here"  # nothing to cut back to: kept
