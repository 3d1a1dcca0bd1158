"""One memory that comes to mind (memory/passages.py chooses them): a line of
the story word for word, with when it was said, who said it and why it came."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, tzinfo
from typing import TYPE_CHECKING

from omoide.llm.stamps import stamp

if TYPE_CHECKING:
    from omoide.domain.witness import Reader
    from omoide.store.recall import Candidate

PASSAGE_CHARS = 600
"""A passage longer than this is cut around its first matched word."""

@dataclass(frozen=True, slots=True)
class Passage:
    message_id: int
    when: datetime
    who: str
    text: str
    matched: tuple[str, ...]
    relevance: float
    importance: float
    recency: float
    score: float
    meaning: float | None = None
    """Cosine similarity (0..1) of the passage to the latest messages; None without an embedding source."""
    completes: int | None = None
    """The passage this line came with: the line it completes (None: it came to mind itself)."""
    follows: int | None = None
    """The line that matched the query's words which this one follows: its reply, or the reply to that (this one may
    match none of them)."""
    on_day: bool = False
    """Said on a day the newest message asks about ("on 7 May", "three days ago"), or the day after, or in the week
    after it in a line that names it."""
    names: str | None = None
    """The pair of words it shares with a better passage, which few other lines hold ("home country"; memory/links.py):
    what brought it, though it may match none of the query's words."""

    def line(self, tz: tzinfo | None = None) -> str:
        return f"{stamp(self.when, tz)} {self.who}: {self.text}"

    def why(self, tz: tzinfo | None = None) -> str:
        """Why it came to mind, for /prompt."""
        if self.completes is not None:
            return f"      {stamp(self.when, tz)} {self.who}: the line beside a passage, which it completes"
        found = (f"names \"{self.names}\" as a better passage does" if self.names is not None
                 else f"follows a line that matched {', '.join(self.matched)}" if self.follows is not None
                 else f"matched {', '.join(self.matched)}" if self.matched else
                 "said on or of a day asked about" if self.on_day else "near in meaning")
        if self.on_day and self.matched:
            found += ", on a day asked about"
        return (f"{self.score:.2f}  {stamp(self.when, tz)} {self.who}: {found} "
                f"(relevance {self.relevance:.2f}, importance {self.importance:.2f}, recency {self.recency:.2f}"
                + ("" if self.meaning is None else f", meaning {self.meaning:.2f}") + ")")


def stem(word: str) -> str:
    """What of `word` its other forms share (the index stems with porter: "realize"
    finds "realized"), for telling which of the query's words a message holds."""
    return word if len(word) <= 4 else word[: max(4, len(word) - 3)]


def readable(line: Candidate, reader: Reader | None) -> bool:
    """Whether the speaker heard `line` (a scene's knowledge boundary; every line without one)."""
    return reader is None or not reader.bounded or reader.reads(None, line.depth)


def estimate_tokens(text: str) -> int:
    return len(text) // 4 + 1


def cut(text: str, matched: Sequence[str], limit: int = PASSAGE_CHARS) -> str:
    """`text` on one line, at most `limit` characters around its first matched word, cut at word ends."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    lower = flat.casefold()
    first = min((i for i in (lower.find(w) for w in matched) if i >= 0), default=0)
    start = max(0, min(first - limit // 3, len(flat) - limit))
    if start > 0:
        space = flat.find(" ", start)
        start = space + 1 if 0 <= space < first else start
    piece = flat[start : start + limit]
    if start + limit < len(flat) and " " in piece:
        piece = piece[: piece.rfind(" ")]
    return ("…" if start > 0 else "") + piece + ("…" if start + len(piece) < len(flat) else "")


@dataclass(frozen=True, slots=True)
class Voices:
    """Who said what, as the speaker sees it."""

    user: str
    character: str
    """The speaker's name (outside a scene, the chat's character)."""
    me: str | None = None
    """The speaker's id in a scene (None: one-on-one, every reply is its own)."""
    host: str = ""
    """The scene's host: who replies stored without a speaker are."""
    names: Mapping[str, str] | None = None
    """Character id -> name in a scene."""

    def who(self, role: str, speaker: str | None) -> str:
        if role == "user":
            return self.user
        if self.me is None or self.names is None:
            return self.character
        key = speaker or self.host
        return self.names.get(key, key)

    def own(self, role: str, speaker: str | None) -> bool:
        return role == "assistant" and (self.me is None or (speaker or self.host) == self.me)
