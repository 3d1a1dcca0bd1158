"""The memo book's pure parts: reading highlights, batches, the prompt's memos."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from omoide.domain.chat import Memo, MemoAuthor, MemoStatus, Message, Role
from omoide.memory.memos import batch_ends_due, due_batches, memos_cut, parse_highlights, prompt_memos
from omoide.memory.summary import InvalidSummary

NOW = datetime(2026, 4, 1, 20, 0, tzinfo=UTC)


@pytest.mark.parametrize("reply", [
    "【Highlight 1】: Emily named the stray cat Mochi.\n【Highlight 2】: Kai revealed his fear of abandonment.",
    "[Highlight 1]: Emily named the stray cat Mochi.\n[Highlight 2]: Kai revealed his fear of abandonment.",
    "Journey Highlights:\n1. Emily named the stray cat Mochi.\n2. Kai revealed his fear of abandonment.",
    "- Emily named the stray cat Mochi.\n- Kai revealed his fear of abandonment.\n<|im_end|>",
    "**Highlight 1:** Emily named the stray cat Mochi.\n**Highlight 2:** Kai revealed his fear of abandonment.",
])
def test_highlights_are_read_in_the_forms_models_write_them(reply: str) -> None:
    assert parse_highlights(reply) == ["Emily named the stray cat Mochi.", "Kai revealed his fear of abandonment."]


def test_at_most_three_highlights_are_kept() -> None:
    reply = "\n".join(f"【Highlight {i}】: Something that mattered happened, number {i}." for i in range(1, 6))
    assert len(parse_highlights(reply)) == 3


@pytest.mark.parametrize(("reply", "why"), [
    ("", "empty"),
    ("   <|im_end|>", "empty"),
    ("*smiles and pours you a coffee* Here you go!", "roleplay"),
    ("I'm sorry, but I can't summarize this conversation.", "refused"),
    ("Hello! What a lovely chat we had about the weather.", "no highlights"),
    ("- *giggles*\n- \"Oh, you!\"", "roleplay"),
])
def test_what_is_not_highlights_is_rejected_with_a_reason(reply: str, why: str) -> None:
    with pytest.raises(InvalidSummary, match=why):
        parse_highlights(reply)


def msg(depth: int) -> Message:
    return Message(id=100 + depth, chat_id=1, parent_id=None, role=Role.USER, content="x", created_at=NOW, depth=depth)


def test_full_batches_without_a_memo_are_due_and_half_seen_ones_are_not() -> None:
    stretch = [msg(d) for d in range(5, 30)]  # depths 5..29: batch 0 (0-7) is cut off at the top
    due = due_batches(stretch, 8, covered={100 + 15})
    assert [(first.depth, last.depth) for first, last in due] == [(16, 23)]


def test_the_memos_window_starts_on_a_batch_boundary_with_at_least_16_raw() -> None:
    assert memos_cut(10, keep=16, batch=8) == 0
    assert [memos_cut(d, keep=16, batch=8) for d in (23, 24, 30, 31, 32)] == [8, 8, 8, 16, 16]


def memo(index: int, *, author: MemoAuthor = MemoAuthor.MODEL, hidden: bool = False, gap: bool = False) -> Memo:
    return Memo(id=index, chat_id=1, anchor_id=1000 + index, anchor_depth=index * 8 + 7, first_id=None if author is MemoAuthor.USER else 1,
                author=author, version_id=index, version_author=author, status=MemoStatus.FAILED if gap else MemoStatus.OK,
                highlights=() if gap else (f"h{index}",), created_at=NOW, updated_at=NOW, hidden=hidden)


def test_the_prompt_has_the_newest_memos_before_the_window_rolling_off_in_steps() -> None:
    starts = []
    for total in range(14, 27):
        stable, _ = prompt_memos([memo(i) for i in range(total)], cut=total * 8, count=15, step=5, batch=8)
        assert 11 <= len(stable) <= 15 or total < 15
        assert [m.id for m in stable] == sorted(m.id for m in stable) and stable[-1].id == total - 1
        starts.append(stable[0].id)
    assert starts == [0, 0, 5, 5, 5, 5, 5, 10, 10, 10, 10, 10, 15], "the oldest memo moves 5 at a time"
    one_by_one, _ = prompt_memos([memo(i) for i in range(20)], cut=160, count=15, step=1, batch=8)
    assert [m.id for m in one_by_one] == list(range(5, 20))


def test_hidden_memos_and_gaps_stay_out_and_your_memos_inside_the_window_go_to_the_tail() -> None:
    memos = [memo(0), memo(1, hidden=True), memo(2, gap=True), memo(3), memo(4, author=MemoAuthor.USER), memo(5)]
    stable, fresh = prompt_memos(memos, cut=4 * 8, count=15, step=5, batch=8)
    assert [m.id for m in stable] == [0, 3]
    assert [m.id for m in fresh] == [4], "a made memo inside the window is left out: its messages are there raw"


def test_highlights_copied_from_the_prompts_examples_and_repeats_are_left_out() -> None:
    reply = ("1. The first moment of Emily's relationship with Kai.\n2. Kai revealed his fear of abandonment.\n"
             "3. Mika gave Kai her silver whisk.\n4. Mika gave Kai her silver whisk.")
    assert parse_highlights(reply, "Here, take my grandmother's silver whisk.") == ["Mika gave Kai her silver whisk."]
    assert parse_highlights("- Emily named the stray cat Mochi.", "Emily found a stray cat; she named it Mochi.") == [
        "Emily named the stray cat Mochi."], "a story that has them keeps them"
    with pytest.raises(InvalidSummary):
        parse_highlights("1. Emily named the stray cat Mochi.", "We talked about the weather.")


@pytest.mark.parametrize("batch", [2, 3, 8])
def test_the_worker_reads_the_stretch_only_when_a_batch_is_due(batch: int) -> None:
    """batch_ends_due (depths only) says what due_batches (the messages) finds, for
    every head, stretch and set of batches already made."""
    import random

    draw = random.Random(batch)
    for _ in range(300):
        head_depth, reach = draw.randrange(0, 60), draw.randrange(1, 40)
        path = [Message(id=100 + d, chat_id=1, parent_id=99 + d if d else None, role=Role.USER, content="x",
                        created_at=datetime(2026, 1, 1, tzinfo=UTC), depth=d)
                for d in range(max(0, head_depth - reach + 1), head_depth + 1)]
        ends = [m for m in path if (m.depth + 1) % batch == 0]
        made = {m.depth for m in ends if draw.random() < 0.7}
        found = due_batches(path, batch, {100 + d for d in made})
        assert batch_ends_due(head_depth, reach, batch, made) == bool(found)
