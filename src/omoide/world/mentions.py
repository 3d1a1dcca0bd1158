"""Finding the names of characters who are not in the conversation.

Every message is scanned for each known character's id, name, nickname and
first name, as whole words, ignoring letter case. Names are escaped, so a
name is never read as a pattern.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from omoide.domain.library import Named
from omoide.domain.chat import Message
from omoide.domain.world import Mention

MIN_ALIAS = 3
"""Shorter names (an 'Al', an 'Ed') would match too many ordinary words."""


@dataclass(frozen=True, slots=True)
class Known:
    key: str
    name: str
    aliases: tuple[str, ...]


def known_from(characters: Iterable[Named]) -> list[Known]:
    known = []
    for c in characters:
        names = {c.id, c.name, c.nickname, c.name.split()[0] if c.name.split() else ""}
        aliases = tuple(sorted((n.strip() for n in names if len(n.strip()) >= MIN_ALIAS), key=len, reverse=True))
        if aliases:
            known.append(Known(c.id, c.display_name, aliases))
    return known


class MentionScanner:
    def __init__(self, known: Sequence[Known], present: Iterable[str]) -> None:
        absent = [k for k in known if k.key not in set(present)]
        self._patterns = [
            (k, re.compile(r"(?<!\w)(?:" + "|".join(re.escape(a) for a in k.aliases) + r")(?!\w)", re.IGNORECASE))
            for k in absent
        ]

    def scan(self, text: str) -> list[Known]:
        return [k for k, pattern in self._patterns if pattern.search(text)]

    def mentions(self, messages: Sequence[Message]) -> list[Mention]:
        """Each absent character named in `messages`, with the first message naming them."""
        found: dict[str, Mention] = {}
        for message in messages:
            for k in self.scan(message.content):
                found.setdefault(k.key, Mention(k.key, k.name, message.id))
        return list(found.values())
