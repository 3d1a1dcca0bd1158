"""Finding the names of characters who are not in the conversation.

Every message is scanned for each known character's id, name, nickname and
first name, as whole words, ignoring letter case. Names are escaped, so a
name is never read as a pattern. The keeper scans only the characters a
message's words may name (`words_of`, looked up in the library's index by the
first word of each name), so what a turn costs does not grow with the library.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from omoide.domain.chat import Message
from omoide.domain.library import Named
from omoide.domain.naming import ALWAYS, alias_words, aliases, first_words, text_words
from omoide.domain.world import Mention


@dataclass(frozen=True, slots=True)
class Known:
    key: str
    name: str
    aliases: tuple[str, ...]


def known_from(characters: Iterable[Named]) -> list[Known]:
    known = []
    for c in characters:
        names = aliases(c)
        if names:
            known.append(Known(c.id, c.display_name, names))
    return known


def words_of(messages: Sequence[Message]) -> set[str]:
    """Every word of `messages`, and ALWAYS: the first words the characters they
    may name begin with (Directory.known_among looks those up)."""
    return {ALWAYS}.union(*(text_words(m.content) for m in messages))


def named_by(known: Known, words: set[str]) -> bool:
    """Whether a name of `known` begins with one of `words`."""
    return not first_words(known.aliases).isdisjoint(words)


class MentionScanner:
    """Finds absent characters named in a text, each by its own pattern. A library
    can hold thousands: a character's pattern is compiled and tried only when the
    text holds every word of one of its names (which a match must contain)."""

    def __init__(self, known: Sequence[Known], present: Iterable[str]) -> None:
        here = set(present)
        self._absent = [k for k in known if k.key not in here]
        self._by_word: dict[str, list[tuple[int, frozenset[str]]]] = {}
        self._always: list[int] = []
        for i, k in enumerate(self._absent):
            for alias in k.aliases:
                words = alias_words(alias)
                if not words:
                    self._always.append(i)
                else:
                    self._by_word.setdefault(words[0], []).append((i, frozenset(words)))
        self._patterns: dict[int, re.Pattern[str]] = {}

    def _pattern(self, i: int) -> re.Pattern[str]:
        if i not in self._patterns:
            aliases = self._absent[i].aliases
            self._patterns[i] = re.compile(r"(?<!\w)(?:" + "|".join(re.escape(a) for a in aliases) + r")(?!\w)", re.IGNORECASE)
        return self._patterns[i]

    def scan(self, text: str) -> list[Known]:
        candidates = set(self._always)
        words = text_words(text)
        for word in words:
            candidates.update(i for i, needed in self._by_word.get(word, ()) if needed <= words)
        return [self._absent[i] for i in sorted(candidates) if self._pattern(i).search(text)]

    def mentions(self, messages: Sequence[Message]) -> list[Mention]:
        """Each absent character named in `messages`, with the first message naming them."""
        found: dict[str, Mention] = {}
        for message in messages:
            for k in self.scan(message.content):
                found.setdefault(k.key, Mention(k.key, k.name, message.id))
        return list(found.values())
