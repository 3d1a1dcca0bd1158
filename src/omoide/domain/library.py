"""A card folder as the library index keeps it: enough to list, name and find
a character without reading its card (characters/library.py reads the cards,
store/library.py keeps the index)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


class Named(Protocol):
    """Anything that names a character: a whole `Character` or its index entry."""

    @property
    def id(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def nickname(self) -> str: ...
    @property
    def display_name(self) -> str: ...


@dataclass(frozen=True, slots=True)
class IndexedCard:
    folder: str
    """The folder's name, which is the character's id."""
    bundled: bool
    stamp: str
    """What the folder and its files looked like when it was read (inode, size,
    modification time): a different stamp means read it again."""
    name: str = ""
    nickname: str = ""
    about: str = ""
    """The start of the description (else the scenario, else the personality) on
    one line, for lists; its {{char}} and {{user}} are filled in where it is shown."""
    kind: str = ""
    """'bundled', 'imported' or 'user'; empty when the folder could not be read."""
    problem: str = ""
    hint: str = ""

    @property
    def id(self) -> str:
        return self.folder

    @property
    def display_name(self) -> str:
        return self.nickname or self.name

    @property
    def readable(self) -> bool:
        return not self.problem
