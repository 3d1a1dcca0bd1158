"""What an end-of-conversation step reads of a conversation: all of it when it
fits the budget; else what lasts of its beginning, then its end.

A long evening's first hour holds what a character should carry away (a name,
a move, a promise) as often as its last does, so the part that does not fit is
not dropped: the extractive writer (memory/extract.py) keeps its sentences
that last (names, places, people, likes, promises, corrections), word for word
and dated, within a share of the budget; the rest of the budget reads the end
as it was said. In a scene each character's transcript is made this way from
the messages it witnessed, so nothing it missed reaches it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from omoide.domain.chat import Message, Role
from omoide.llm.stamps import stamp
from omoide.memory.extract import extract

EARLIER = "(Earlier in the conversation, what lasts of it, word for word:)"
LATER = "(Then, up to the end:)"
EARLIER_SHARE = 0.5
"""The most of the budget the beginning's lasting sentences take."""


def _said(messages: Sequence[Message]) -> list[Message]:
    return [m for m in messages if m.role in (Role.USER, Role.ASSISTANT) and m.content.strip()]


def _plain(message: Message, speaker: Callable[[Message], str]) -> str:
    return f"{speaker(message)}: {message.content.strip()}"


def _dated(message: Message, speaker: Callable[[Message], str]) -> str:
    """One line per message, as the extractive writer reads it: `[stamp] Speaker: text`."""
    return f"{stamp(message.created_at)} {speaker(message)}: {' '.join(message.content.split())}"


def render_transcript(
    messages: Sequence[Message], speaker: Callable[[Message], str], limit: int, *,
    user: str = "", character: str = "", share: float = EARLIER_SHARE, dated: bool = False,
) -> str:
    """`messages` as `Speaker: text` lines within `limit` characters (`dated`:
    each opened by its time, for steps that keep the story's own words). One
    that does not fit keeps the lasting sentences of its beginning (up to
    `share` of the limit; `character` is whose point of view, `user` who the
    user is), then as much of its end as the rest holds."""
    said = _said(messages)
    lines = [(_dated if dated else _plain)(m, speaker) for m in said]
    text = "\n".join(lines)
    if len(text) <= limit:
        return text
    earlier_budget = int(limit * share)
    # The end starts at the first message that reaches into the last (limit - earlier_budget) characters.
    start, used = len(lines), 0
    while start > 0 and used < limit - earlier_budget:
        start -= 1
        used += len(lines[start]) + 1
    kept = extract([_dated(m, speaker) for m in said[:start]], user=user, character=character,
                   budget_chars=earlier_budget) if start > 0 else []
    if not kept:
        return "…" + text[-limit:]
    earlier = "\n".join([EARLIER, *kept, LATER]) + "\n"
    end = "\n".join(lines[start:])
    room = max(0, limit - len(earlier) - 1)
    return earlier + (end if len(end) <= room else "…" + end[-room:])
