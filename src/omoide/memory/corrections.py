"""Corrections replace what they correct, without a model.

A message of yours that corrects an earlier fact ("actually my cat is Mochi
now, not Biscuit", "I no longer live in London", "Ines, not Ana") names the old
value. From then on every memory layer that shows the old value shows it as
past ("Biscuit (until 11/28)"), and the prompt says what is true now: the
correction itself, word for word with its date. Pure text work: the turn finds
the corrections on the path (store.recall.corrections), the prompt's layers
apply them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from datetime import datetime, tzinfo

from omoide.llm.stamps import stamp

CUES = ("actually", "misspoke", "correction", "anymore", "longer", "instead", "not", "wrong", "moved", "changed")
"""Words one of which a correction holds (the full-text search's terms)."""

_VALUE = r"([A-Z][\w'’-]*(?:[ -][A-Z][\w'’-]*){0,2}|[\w-]*\d[\w-]*)"
_STALE = (
    re.compile(rf"\b(?:not|no longer|instead of|rather than)\s+(?:(?:the|a|an|my|in|at|called|named|with)\s+)?{_VALUE}"),
    re.compile(rf"\bmoved (?:away )?from\s+(?:(?:the|my)\s+)?{_VALUE}"),
    re.compile(rf"\bno longer (?:[a-z]+ ){{0,3}}(?:in|at|with|for|called|named|to)\s+(?:(?:the|my|a)\s+)?{_VALUE}"),
    re.compile(rf"\b{_VALUE}\s+(?:anymore|any more|no more)\b"),
)
_IS_CORRECTION = re.compile(
    r"\b(actually|misspoke|correction|anymore|any more|no longer|instead of|rather than|i was wrong|moved (?:away )?from|"
    r"changed my mind)\b|,\s*not\s+[A-Z\d]", re.IGNORECASE)
_NOT_A_VALUE = frozenset({"I", "I'm", "It", "It's", "The", "A", "An", "My", "Me", "You", "We", "That", "This", "Sure",
                          "Really", "Yet", "Now", "Never", "Just", "So", "Too", "Even", "Much"})
_MARKED = re.compile(r"\s*\(until \d{2}/\d{2}\)")


@dataclass(frozen=True, slots=True)
class Correction:
    message_id: int
    at: datetime
    text: str
    """The correcting message, word for word."""
    stale: tuple[str, ...]
    """The values it says are no longer so."""


def stale_values(text: str) -> tuple[str, ...]:
    """The values a correction says are no longer so ('' when it is none)."""
    if not _IS_CORRECTION.search(text):
        return ()
    found: list[str] = []
    for pattern in _STALE:
        for match in pattern.finditer(text):
            value = match.group(1).strip(" -")
            words = value.split()
            while words and words[0] in _NOT_A_VALUE:
                words = words[1:]
            value = " ".join(words)
            if value and value not in found and (value[0].isupper() or any(c.isdigit() for c in value)):
                found.append(value)
    return tuple(found)


def correction(message_id: int, at: datetime, text: str) -> Correction | None:
    stale = stale_values(text)
    return Correction(message_id, at, text.strip(), stale) if stale else None


def mark_past(text: str, corrections: Sequence[Correction], tz: tzinfo | None = None) -> str:
    """`text` with every old value a correction names shown as past: 'Biscuit
    (until 11/28)'. A value inside the correcting sentence itself is left as it is."""
    if not text or not corrections:
        return text
    return _mark_past(text, tuple(corrections), tz)


@lru_cache(maxsize=128)  # the same summary and memos are marked at every turn until memory work changes them
def _mark_past(text: str, corrections: tuple[Correction, ...], tz: tzinfo | None) -> str:
    for fix in corrections:
        until = stamp(fix.at, tz)[1:6]
        for value in fix.stale:
            pattern = re.compile(rf"(?<![\w]){re.escape(value)}(?![\w])(?!\s*\(until)")
            parts = text.split(fix.text) if fix.text in text else [text]
            parts = [pattern.sub(f"{value} (until {until})", part) for part in parts]
            text = fix.text.join(parts)
    return text


def block(corrections: Sequence[Correction], user: str, tz: tzinfo | None = None) -> str:
    """What is true now: each correction, word for word with its date, newest last."""
    if not corrections:
        return ""
    lines = [f"- {stamp(fix.at, tz)} {user}: {_MARKED.sub('', fix.text)}" for fix in sorted(corrections, key=lambda f: f.at)]
    return "## Corrections (these replace what was said before)\n" + "\n".join(lines)
