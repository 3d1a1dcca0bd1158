"""How a character is named in a message: the names a mention is found by,
and the word each begins with, which the library index keeps so a message's
words find the few characters it may name (world/mentions.py, store/library.py)."""

from __future__ import annotations

import re
from collections.abc import Iterable

from omoide.domain.library import Named

MIN_ALIAS = 3
"""Shorter names (an 'Al', an 'Ed') would match too many ordinary words."""

ALWAYS = ""
"""The first word of a name with no letters or digits: such a name is tried on every message."""

_WORD = re.compile(r"\w+")


def aliases(character: Named) -> tuple[str, ...]:
    """The id, name, nickname and first name a mention may use, longest first."""
    first = character.name.split()
    names = {character.id, character.name, character.nickname, first[0] if first else ""}
    return tuple(sorted((n.strip() for n in names if len(n.strip()) >= MIN_ALIAS), key=len, reverse=True))


def alias_words(alias: str) -> list[str]:
    """The \\w runs of `alias`, lowercased (split on spaces when that gives the same: it is quicker)."""
    parts = alias.lower().split()
    return parts if all(p.isalnum() for p in parts) else [w.lower() for w in _WORD.findall(alias)]


def text_words(text: str) -> set[str]:
    """The words of a message, lowercased as `alias_words` lowercases a name's."""
    return {w.lower() for w in _WORD.findall(text)}


def first_words(names: Iterable[str]) -> set[str]:
    """The word each of `names` begins with (ALWAYS for one without words): a
    message can name one of them only if it holds that word."""
    return {words[0] if words else ALWAYS for words in map(alias_words, names)}
