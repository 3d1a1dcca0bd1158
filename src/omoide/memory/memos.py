"""The memo book (seed 003): every batch of messages becomes a memo of 2-3
"Journey Highlights". Pure parts: the request, reading the reply, which batches
are due, which memos reach the prompt and how they read there.

Batches are aligned on depth: batch k holds the messages at depths
[k*B, k*B + B - 1] of a path, so every branch agrees on where batches end, and a
batch is covered on a path when a made memo (or a gap) is anchored at its last
message on that path.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import tzinfo

from omoide.domain.chat import Memo, MemoAuthor, Message, Role
from omoide.llm.base import ChatMessage
from omoide.memory.extract import extract, reported
from omoide.memory.spoiled import spoiled
from omoide.memory.summary import InvalidSummary, instructions_of
from omoide.llm.stamps import stamp
from omoide.memory.window import speaker_label

MEMO_PROMPT = """You keep the memo book of a roleplay between {name} and {user}. Read the messages below and \
write their Journey Highlights: the 2 or 3 moments worth remembering weeks from now.
Take highlights only from these four categories:
- Relationship progression: trust, affection, betrayal, shifts of power between them.
- Significant milestones: naming something, first words, emotional breakthroughs.
- Notable items and keepsakes: objects given, exchanged or discovered that mean something.
- Major story turning points: plot twists, revelations, changes of direction.
Never record: routine daily activities (eating, sleeping, bathing), temporary emotional states \
("felt nervous"), minor first-time events that lead nowhere, status-bar changes (health, hunger, money).
Write each highlight as one factual sentence in the third person, past tense, on its own line, exactly like this:
【Highlight 1】: Emily named the stray cat "Mochi", their first shared act of care.
【Highlight 2】: Kai revealed his fear of abandonment, deepening Emily's understanding.
Reply with the highlights only: no greeting, no roleplay, no commentary."""

EXAMPLE_WORDS = ("Emily", "Mochi", "stray cat", "fear of abandonment")
"""What only the prompt's examples say: a highlight naming one that the messages
never mention was copied from the examples (small models do), not remembered."""
MAX_HIGHLIGHTS = 3
MAX_HIGHLIGHT_CHARS = 400

_TEMPLATE_TOKENS = re.compile(r"<\|im_(start|end)\|>|<\|eot_id\|>|</?s>")
_MARKER = re.compile(
    r"^\s*(?:[-•]\s*)?(?:【\s*highlight\s*\d*\s*】|\[\s*highlight\s*\d*\s*\]|\**\s*highlight(?![a-z])\s*\d*\s*[:：]?\s*\**|\d+[.)])"
    r"\s*[:：.\-–]?\s*(.*)$",
    re.IGNORECASE,
)
_STAMP = re.compile(r"^\[[^\]]*\]\s*")
_BULLET = re.compile(r"^\s*[-•]\s+(.*)$")
_REFUSAL = re.compile(r"\b(I can(?:no|')t|I'm sorry|I am sorry|as an AI|I cannot|I won't)\b", re.IGNORECASE)
_ROLEPLAY = ("*", '"', "“", "「", "(")


def memo_lines(name: str, user: str, batch: Sequence[Message], tz: tzinfo | None = None,
               names: Mapping[str, str] | None = None) -> list[str]:
    """The batch's messages as a memo request quotes them: `[04/01 22:15] Kai: ...`."""
    return [
        f"{stamp(m.created_at, tz)} {speaker_label(m, name, user, names)}: {m.content.strip()}"
        for m in batch
        if m.role in (Role.USER, Role.ASSISTANT) and m.content.strip()
    ]


def memo_task(name: str, user: str, lines: Sequence[str]) -> list[ChatMessage]:
    """The request for a memo of the quoted `lines`."""
    return [
        {"role": "system", "content": MEMO_PROMPT.format(name=name, user=user)},
        {"role": "user", "content": "Messages:\n" + "\n".join(lines) + "\n\nJourney Highlights:"},
    ]


def parse_highlights(text: str, source: str = "") -> list[str]:
    """The highlights in a reply, one per line; InvalidSummary when the reply is
    not highlights (a roleplay reply, an empty answer, a refusal). With the
    batch's text as `source`, highlights copied from the prompt's examples and
    repeats are left out."""
    copied = [w.lower() for w in EXAMPLE_WORDS if source and w.lower() not in source.lower()]
    body = _TEMPLATE_TOKENS.sub("", text).strip()
    if not body:
        raise InvalidSummary("the memo came back empty")
    if _REFUSAL.search(body[:200]):
        raise InvalidSummary("the model refused to write the memo")
    found: list[str] = []
    roleplay = body.startswith(_ROLEPLAY)
    for line in body.splitlines():
        match = _MARKER.match(line) or _BULLET.match(line)
        if match is None:
            continue
        highlight = " ".join(match.group(1).split()).strip()
        if highlight.startswith(_ROLEPLAY):
            roleplay = True
            continue
        if len(highlight) >= 12 and highlight not in found and not any(w in highlight.lower() for w in copied):
            found.append(highlight[:MAX_HIGHLIGHT_CHARS])
    if not found:
        if roleplay:
            raise InvalidSummary("the model wrote a roleplay reply instead of highlights")
        raise InvalidSummary("the reply had no highlights in it")
    return found[:MAX_HIGHLIGHTS]


def read_memo(answer: str, request: Sequence[ChatMessage], lines: Sequence[str], *, name: str, user: str) -> list[str]:
    """The highlights of a model's memo of `lines` (as `request` quoted them);
    InvalidSummary when they are no highlights, repeat the instructions, or keep
    none of the names and numbers the batch holds."""
    highlights = parse_highlights(answer, "\n".join(lines))
    if why := spoiled("\n".join(highlights), instructions=instructions_of(request), lines=lines, user=user,
                      character=name, least_names=1):
        raise InvalidSummary(why.replace("summary", "memo").replace("summarizing", "writing highlights"))
    return highlights


def fallback_highlights(lines: Sequence[str], *, name: str, user: str) -> list[str]:
    """A memo no model wrote: the batch's sentences that tell most (memory/extract.py),
    word for word, told as said ("Kai said: ..."); empty when none tells anything
    (the batch then stays a gap)."""
    kept = extract(lines, user=user, character=name, budget_chars=MAX_HIGHLIGHTS * MAX_HIGHLIGHT_CHARS, most=MAX_HIGHLIGHTS)
    return [_STAMP.sub("", reported(line))[:MAX_HIGHLIGHT_CHARS] for line in kept]  # a memo carries its batch's dates


def clean_user_highlights(text: str) -> list[str]:
    """A memo you write or edit: one highlight per non-empty line (list markers dropped)."""
    out = []
    for line in text.splitlines():
        match = _MARKER.match(line) or _BULLET.match(line)
        line = (match.group(1) if match else line).strip()
        if line:
            out.append(line)
    return out


def due_batches(path: Sequence[Message], batch: int, covered: set[int]) -> list[tuple[Message, Message]]:
    """The full batches inside `path` (a stretch of one path, oldest first) whose
    last message has no made memo or gap (`covered` holds those anchor ids)."""
    due = []
    for index, message in enumerate(path):
        if (message.depth + 1) % batch or index + 1 < batch or message.id in covered:
            continue
        due.append((path[index - batch + 1], message))
    return due


def batch_ends_due(head_depth: int, reach: int, batch: int, covered_depths: set[int]) -> bool:
    """Whether `due_batches` finds any in the last `reach` messages up to a head
    at `head_depth`, from the depths of the covered anchors alone (on one path
    a depth names one message)."""
    first = max(0, head_depth - reach + 1)
    return any((depth + 1) % batch == 0 and depth not in covered_depths
               for depth in range(first + batch - 1, head_depth + 1))


def near_stretch(*, batch: int, count: int, step: int, recent: int) -> int:
    """Messages above the head whose batches can reach the prompt (and a little
    more): the worker keeps their memos made, the prompt looks there first."""
    return batch * (count + step + 2) + recent


def memos_cut(head_depth: int, *, keep: int, batch: int) -> int:
    """The 'memos' style's raw window starts at this depth: at least `keep`
    messages, starting on a batch boundary, so it moves once per batch."""
    return max(0, (head_depth + 1 - keep) // batch * batch)


def prompt_memos(
    on_path: Sequence[Memo], cut: int, *, count: int, step: int, batch: int
) -> tuple[list[Memo], list[Memo]]:
    """The memos for the stable layer (the newest `count` or a few fewer, from
    before the raw window, which starts at depth `cut`) and for the volatile tail
    (memos you wrote inside the raw window's stretch). The layer's oldest memo
    moves in steps of `step` batches, so its text changes less often."""
    visible = [m for m in on_path if not m.hidden and not m.gap]
    stable = [m for m in visible if m.anchor_depth < cut]
    fresh = [m for m in visible if m.anchor_depth >= cut and m.author is MemoAuthor.USER]
    if count <= 0:
        return [], fresh
    if len(stable) > count:
        # In batch numbers: start at the first multiple of `step` at or after the newest `count`.
        oldest = stable[-count].anchor_depth // batch
        boundary = -(-oldest // step) * step
        if boundary > stable[-1].anchor_depth // batch:
            boundary = oldest
        stable = [m for m in stable[-count:] if m.anchor_depth // batch >= boundary]
    return stable, fresh


def render_memo(memo: Memo, tz: tzinfo | None = None) -> str:
    when = memo.created_at
    if memo.first_at is not None and memo.last_at is not None:
        start, end = stamp(memo.first_at, tz)[1:-1], stamp(memo.last_at, tz)[1:-1]
        heading = f"[{start}]" if start == end else f"[{start} – {end}]"
    else:
        heading = stamp(when, tz)
    return heading + "\n" + "\n".join(f"- {h}" for h in memo.highlights)


def render_memos(memos: Sequence[Memo], tz: tzinfo | None = None) -> str:
    return "\n".join(render_memo(m, tz) for m in memos)
