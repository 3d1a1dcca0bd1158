"""The lines that come with a memory that comes to mind (memory/passages.py):
the replies to the best word matches, as candidates of their own, and the line
each chosen passage completes (a question's answer, an answer's question, the
line a line points back to, what was asked back about it and answered), so a
value never comes back without what it is."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from omoide.memory.passage import Passage, Voices, cut, readable

if TYPE_CHECKING:
    from omoide.domain.witness import Reader
    from omoide.store import Store
    from omoide.store.recall import Candidate

ANSWERED = 24
"""The best word matches whose replies become candidates too (`answers`)."""
ANSWER_WEIGHT = 0.7
"""What a reply to a matching line weighs against the line itself."""
REPLY_DEPTH = 2
"""How many replies down from a matching line are candidates: its reply, and the reply to that."""
_POINTS_BACK = re.compile(r"^\W*(?:\w+,\s+)?(?:it|it's|that|that's|this|those|these|they|them|he|she|her|him|yes|yeah|no"
                          r"|nope|yep|sure|right|exactly|actually|scratch that)\b", re.I)
"""A line that opens by pointing at what the line before it said."""


async def answers(store: Store, head_id: int, candidates: Sequence[Candidate], relevance: dict[int, float],
                   shown: set[int], reader: Reader | None, follows: dict[int, int]) -> list[Candidate]:
    """The replies on the path to the best `ANSWERED` word matches, and the replies
    to those, as candidates of their own at `ANSWER_WEIGHT` of the line they answer
    (noted in `relevance`, and in `follows` as the match they lead from): what a
    line leads to is about what it said ("We went camping." -> "We roasted
    marshmallows and hiked."; "Opening night is tomorrow." -> "The studio looks
    amazing." -> "I'm so excited!"), though it shares none of its words."""
    best = sorted((c for c in candidates if c.message_id in relevance), key=lambda c: -relevance[c.message_id])[:ANSWERED]
    have = {c.message_id for c in candidates} | shown
    level = [(c, relevance[c.message_id], c.message_id) for c in best]  # a line, what it weighs, the match it leads from
    out: list[Candidate] = []
    for _ in range(REPLY_DEPTH):
        if not level:
            break
        _, children = await store.recall.beside([c.message_id for c, _, _ in level])
        found = [(child, weight, match) for parent, weight, match in level for child in children.get(parent.message_id, [])
                 if child.message_id not in shown and child.role in ("user", "assistant") and child.text.strip()
                 and readable(child, reader)]
        on_path = await store.recall.on_path(head_id, sorted({c.message_id for c, _, _ in found})) if found else set()
        reached: dict[int, tuple[Candidate, float, int]] = {}  # a reply of several lines leads on once, at its best
        for child, weight, match in found:
            if child.message_id not in on_path:
                continue
            weight *= ANSWER_WEIGHT
            if weight > reached.get(child.message_id, (child, -1.0, match))[1]:
                reached[child.message_id] = (child, weight, match)
        level = list(reached.values())  # a reply that is a match of its own leads on too
        for child, weight, match in level:
            relevance[child.message_id] = max(relevance.get(child.message_id, 0.0), weight)
            if child.message_id not in have:
                follows[child.message_id] = match
                have.add(child.message_id)
                out.append(child)
    return out


def _asks(text: str) -> bool:
    return text.rstrip().endswith("?")


def completes_before(text: str, before: str) -> bool:
    """Whether `text` says what it is only with the line `before` it: an answer to
    a question ("Lilies. I can't bear them."), or a line that opens by pointing back."""
    return _asks(before) or bool(_POINTS_BACK.match(" ".join(text.split())))


async def beside(store: Store, head_id: int, ranked: Sequence[Passage], shown: set[int], voices: Voices,
                 reader: Reader | None) -> dict[int, list[Passage]]:
    """The lines each of the `ranked` passages completes, by passage: the answer after
    a question, the question before an answer, the line a line points back to, and
    the question a reply asks back about a line, with its answer ("We went camping."
    -> "How was it?" -> "We roasted marshmallows and hiked.")."""
    parents, children = await store.recall.beside([p.message_id for p in ranked])
    wanted: list[tuple[Passage, Candidate]] = []
    asked_back: list[tuple[Passage, Candidate]] = []  # a reply that asks about the passage ("How was it?")
    for passage in ranked:
        text = passage.text
        parent = parents.get(passage.message_id)
        if passage.follows is not None:  # the line it answers, which the query matched
            if parent is not None:
                wanted.append((passage, parent))
            continue
        if _asks(text):
            wanted += [(passage, c) for c in children.get(passage.message_id, [])]
        else:
            asked_back += [(passage, c) for c in children.get(passage.message_id, []) if _asks(c.text)]
        if parent is not None and completes_before(text, parent.text):
            wanted.append((passage, parent))
    if asked_back:  # the question comes with its answer, or not at all: alone it tells nothing
        _, answered = await store.recall.beside([c.message_id for _, c in asked_back])
        for passage, question in asked_back:
            if answered.get(question.message_id):
                wanted += [(passage, question), *((passage, a) for a in answered[question.message_id])]
    wanted = [(p, c) for p, c in wanted if c.message_id not in shown and c.role in ("user", "assistant")
              and c.text.strip() and readable(c, reader)]
    if not wanted:
        return {}
    on_path = await store.recall.on_path(head_id, sorted({c.message_id for _, c in wanted}))
    out: dict[int, list[Passage]] = {}
    for passage, c in wanted:
        if c.message_id in on_path:
            out.setdefault(passage.message_id, []).append(
                Passage(c.message_id, c.created_at, voices.who(c.role, c.speaker), cut(c.text, ()), (), 0.0,
                        passage.importance, passage.recency, 0.0, completes=passage.message_id))
    return out
