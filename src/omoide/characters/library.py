"""Finding characters: the bundled ones, and the user's own (which win when
they share an id).

A `Library` with an index (store/library.py, in the database) reads only the
cards a command uses: each folder's names and the start of its description
are kept with a stamp of its files, and a folder is read again only when its
stamp changed. Finding a character by id or name looks it up in the index and
checks only the folders it names, while the characters folders themselves are
unchanged (no folder added, removed or renamed); listing stats every folder
and reads only the changed and new ones. Without an index (`Library()`)
every folder is read, as the module functions below do.
"""

from __future__ import annotations

import difflib
import logging
import os
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from omoide import locations
from omoide.characters.cards import load_character
from omoide.characters.folder import CARD_FILE, CHARACTER_FILE, LOREBOOK_FILE
from omoide.characters.model import Character
from omoide.domain.library import IndexedCard
from omoide.domain.naming import aliases, first_words
from omoide.errors import CharacterError

DEFAULT_ID = "suzune"
ABOUT_CHARS = 300
"""How much of a description the index keeps for lists (which cut it shorter)."""

log = logging.getLogger(__name__)


class CardIndex(Protocol):
    """Where the library keeps its index (store/library.py's CardIndexFile)."""

    def dirs(self) -> dict[str, str]: ...
    def cards(self) -> list[IndexedCard]: ...
    def names(self) -> list[IndexedCard]: ...
    def ids(self) -> list[str]: ...
    def named_with_if(self, words: Collection[str], dirs: dict[str, str]) -> list[IndexedCard] | None: ...
    def lookup(self, key: str) -> list[IndexedCard]: ...
    def write(self, dirs: dict[str, str], changed: Sequence[IndexedCard], removed: Sequence[tuple[bool, str]]) -> None: ...
    def close(self) -> None: ...


@dataclass
class Listing:
    characters: list[Character] = field(default_factory=list)
    problems: list[CharacterError] = field(default_factory=list)
    """Folders that could not be read: shown to the user, never fatal."""


def _which(bundled: bool) -> str:
    return "bundled" if bundled else "user"


def _directory(bundled: bool) -> Path:
    return locations.bundled_characters_dir() if bundled else locations.user_characters_dir()


def folder_of(entry: IndexedCard) -> Path:
    """Where the character an index entry names lives."""
    return _directory(entry.bundled) / entry.folder


def _stat_part(path: str | Path) -> str:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return "-"
    except OSError as exc:
        return f"!{exc.errno}"
    # Not the change time: it moves on a chmod or a touch of the access time, which change no card.
    return f"{st.st_ino}:{st.st_size}:{st.st_mtime_ns}"


_READ_FILES = (CHARACTER_FILE, LOREBOOK_FILE, CARD_FILE)
"""The files `load_character` reads."""


def dir_stamp(directory: Path) -> str:
    """A characters folder as it stands: a folder added, removed or renamed in it changes this."""
    return f"{directory}|{_stat_part(directory)}"


def folder_stamp(folder: Path) -> str:
    """A character folder and the files a character is read from, as they stand."""
    where = str(folder)  # plain strings: ten thousand folders are stamped per listing
    return "|".join(_stat_part(path) for path in (where, *(os.path.join(where, name) for name in _READ_FILES)))


def _about(character: Character) -> str:
    """What lists say about a character: the start of its description (else its
    scenario, else its personality) on one line, macros left for the list to fill."""
    text = character.description.strip() or character.scenario.strip() or character.personality.strip()
    return " ".join(text[: ABOUT_CHARS * 4].split())[:ABOUT_CHARS]


class Library:
    """The characters there are, read through an index when there is one."""

    def __init__(self, index: CardIndex | None = None) -> None:
        self.index = index
        self._read: dict[tuple[bool, str], Character] = {}
        """Characters read by this library, by (bundled, folder): each card is read once."""
        self._dir_problems: list[CharacterError] = []

    def close(self) -> None:
        if self.index is not None:
            self.index.close()

    # -- reading one folder ------------------------------------------------------------------

    def _index_one(self, folder: Path, bundled: bool, stamp: str) -> IndexedCard:
        if not (folder / CHARACTER_FILE).is_file():
            return IndexedCard(folder.name, bundled, stamp, problem=f"{folder} has no {CHARACTER_FILE}.",
                               hint="Add one with at least a name, or move the folder out of the characters folder.")
        try:
            character = load_character(folder, bundled=bundled)
        except CharacterError as exc:
            return IndexedCard(folder.name, bundled, stamp, problem=exc.message, hint=exc.hint)
        self._read[(bundled, folder.name)] = character
        return IndexedCard(folder.name, bundled, stamp, character.name, character.nickname, _about(character),
                           source_kind(character))

    def _character(self, entry: IndexedCard) -> Character:
        """The character of an entry, read now unless this library already read it."""
        key = (entry.bundled, entry.folder)
        if key not in self._read:
            if not entry.readable:
                raise CharacterError(entry.problem, entry.hint)
            self._read[key] = load_character(_directory(entry.bundled) / entry.folder, bundled=entry.bundled)
        return self._read[key]

    # -- the whole library -------------------------------------------------------------------

    def refresh(self) -> list[IndexedCard]:
        """Every folder's entry, bundled then user, each sorted by folder: the
        index brought up to date by stamps (only changed and new cards are read)."""
        known = {(c.bundled, c.folder): c for c in self.index.cards()} if self.index is not None else {}
        dirs: dict[str, str] = {}
        entries: list[IndexedCard] = []
        changed: list[IndexedCard] = []
        self._dir_problems = []
        for bundled in (True, False):
            directory = _directory(bundled)
            dirs[_which(bundled)] = dir_stamp(directory)  # before the scan: a change during it shows next time
            try:
                with os.scandir(directory) as found:
                    names = sorted(e.name for e in found if not e.name.startswith(".") and e.is_dir())
            except FileNotFoundError:
                names = []
            except OSError as exc:
                self._dir_problems.append(CharacterError(f"{directory} cannot be read ({exc.strerror or exc}).", "Check its permissions."))
                dirs.pop(_which(bundled))
                names = []
            for name in names:
                stamp = folder_stamp(directory / name)
                entry = known.pop((bundled, name), None)
                if entry is None or entry.stamp != stamp:
                    entry = self._index_one(directory / name, bundled, stamp)
                    changed.append(entry)
                entries.append(entry)
        if self.index is not None and (changed or known or dirs != self.index.dirs()):
            self.index.write(dirs, changed, list(known))
        return entries

    def entries(self) -> list[IndexedCard]:
        """The characters you can chat with, sorted by id (a user's folder wins over a bundled one)."""
        return self.survey()[0]

    def names(self) -> list[IndexedCard]:
        """`entries()` for naming (mentions, gossip): while no folder was added,
        removed or renamed, straight from the index, without a look at each folder."""
        if self.index is None or not self._unchanged_dirs():
            return self.entries()
        by_id: dict[str, IndexedCard] = {}
        for entry in self.index.names():  # bundled before user for each folder name
            if entry.readable:
                by_id[entry.folder] = entry
        return [by_id[key] for key in sorted(by_id)]

    def ids(self) -> list[str]:
        """The ids of `entries()`: while no folder was added, removed or renamed, from the index."""
        if self.index is None or not self._unchanged_dirs():
            return [e.id for e in self.entries()]
        return self.index.ids()

    def named_with(self, words: Collection[str]) -> list[IndexedCard] | None:
        """`names()` of the characters with a name beginning with one of `words`
        (domain/naming.py's first words: a message holding none of them cannot
        name the character), from the index: only their rows are read. None when
        the index cannot answer (none, or a folder came or went since): then
        `names()` reads every folder and brings the index up to date."""
        if self.index is None:
            return None
        named = self.index.named_with_if(words, {_which(b): dir_stamp(_directory(b)) for b in (True, False)})
        if named is None:  # a folder came or went since the index was made
            return None
        by_id: dict[str, IndexedCard] = {}
        for entry in named:  # bundled before user for each folder name
            if entry.readable:
                by_id[entry.folder] = entry
        return [by_id[key] for key in sorted(by_id) if not first_words(aliases(by_id[key])).isdisjoint(words)]

    def survey(self) -> tuple[list[IndexedCard], list[CharacterError]]:
        """`entries()`, and the problems with the folders that could not be read: no card is read
        unless it changed since it was indexed."""
        by_id: dict[str, IndexedCard] = {}
        problems: list[CharacterError] = []
        for entry in self.refresh():
            if entry.readable:
                by_id[entry.folder] = entry
            else:
                problems.append(CharacterError(entry.problem, entry.hint))
        return [by_id[key] for key in sorted(by_id)], [*self._dir_problems, *problems]

    def scan(self) -> Listing:
        """Every character that can be read, sorted by id, and the problems with the rest."""
        listing = Listing()
        by_id: dict[str, Character] = {}
        for entry in self.refresh():
            if not entry.readable:
                listing.problems.append(CharacterError(entry.problem, entry.hint))
                continue
            try:
                by_id[entry.folder] = self._character(entry)
            except CharacterError as exc:  # changed since it was indexed
                listing.problems.append(exc)
        listing.problems[:0] = self._dir_problems
        listing.characters = [by_id[key] for key in sorted(by_id)]
        return listing

    def called(self, names: Iterable[str]) -> list[Character]:
        """The characters whose id, name or nickname is one of `names` (letter case
        and surrounding spaces aside), by id: only their cards are read."""
        wanted = {n.strip().casefold() for n in names}
        found = []
        for entry in self.entries():
            if wanted & {entry.folder.casefold(), entry.name.strip().casefold(), entry.nickname.strip().casefold()}:
                try:
                    found.append(self._character(entry))
                except CharacterError:  # changed since it was listed: not there for this
                    continue
        return found

    # -- one character -----------------------------------------------------------------------

    def load(self, character_id: str) -> Character | None:
        """The character with this id (a user's folder before a bundled one), or None."""
        for bundled in (False, True):
            folder = _directory(bundled) / character_id
            if character_id.startswith(".") or "/" in character_id or os.sep in character_id or not folder.is_dir():
                continue
            key = (bundled, character_id)
            if key not in self._read:
                try:
                    self._read[key] = load_character(folder, bundled=bundled)
                except CharacterError:
                    continue
            return self._read[key]
        return None

    def _unchanged_dirs(self) -> bool:
        if self.index is None:
            return False
        recorded = self.index.dirs()
        return all(recorded.get(_which(b)) == dir_stamp(_directory(b)) for b in (True, False))

    def _indexed(self, wanted: str) -> list[IndexedCard] | None:
        """The entries whose id, name or nickname is `wanted`, each checked against
        its folder; None when the index cannot answer (then the library is scanned)."""
        if self.index is None or not self._unchanged_dirs():
            return None
        found = []
        stale: list[IndexedCard] = []
        for entry in self.index.lookup(wanted):
            stamp = folder_stamp(_directory(entry.bundled) / entry.folder)
            if stamp != entry.stamp:
                entry = self._index_one(_directory(entry.bundled) / entry.folder, entry.bundled, stamp)
                stale.append(entry)
            found.append(entry)
        if stale:
            self.index.write(self.index.dirs(), stale, [])
        by_id: dict[str, IndexedCard] = {}
        for entry in found:
            if entry.readable or entry.folder not in by_id:
                by_id[entry.folder] = entry
        matches = [by_id[key] for key in sorted(by_id)]
        if not any(wanted in (e.folder.casefold(), e.name.casefold(), e.nickname.casefold()) for e in matches if e.readable):
            return None  # renamed since, or not indexed: the scan decides (and suggests a name)
        return matches

    def find(self, name_or_id: str, *, notice: Callable[[str], None] | None = None) -> Character:
        """By id, then by name or nickname, ignoring letter case. When a name
        belongs to several characters the first by id is used, and `notice` (and
        the log) says which, and how to choose another."""
        wanted = name_or_id.strip().casefold()
        indexed = self._indexed(wanted)
        everyone = indexed if indexed is not None else self.entries()
        readable = [e for e in everyone if e.readable]
        for entry in readable:
            if wanted == entry.folder.casefold():
                return self._character(entry)
        named = [e for e in readable if wanted in (e.name.casefold(), e.nickname.casefold())]
        if len(named) > 1:
            message = (
                f"'{name_or_id}' is the name of {len(named)} characters ({', '.join(e.id for e in named)}); "
                f"using {named[0].id}. Give the id to choose another."
            )
            log.warning("%s", message)
            if notice is not None:
                notice(message)
        if named:
            return self._character(named[0])
        ids = [e.id for e in readable]
        names = {e.name.casefold(): e.id for e in readable}
        close = difflib.get_close_matches(wanted, ids + list(names), n=1, cutoff=0.5)
        hint = f"Did you mean '{names.get(close[0], close[0])}'? " if close else ""
        hint += f"Available: {', '.join(ids) or 'none'}. `omoide characters import FILE` adds one from a card."
        raise CharacterError(f"There is no character called '{name_or_id}'.", hint)

    def default(self) -> Character:
        """Suzune when she is there, else the first character by id."""
        found = self.load(DEFAULT_ID)
        if found is not None:
            return found
        entries = self.entries()
        if not entries:
            raise CharacterError(
                "There are no characters.",
                f"Put a character folder in {locations.user_characters_dir()} or import a card with `omoide characters import FILE`.",
            )
        return self._character(entries[0])


def scan_characters() -> Listing:
    """Every character that can be read, sorted by id, and the problems with the rest."""
    return Library().scan()


def list_characters() -> list[Character]:
    return scan_characters().characters


def source_kind(character: Character) -> str:
    """'bundled', 'imported' (from a card) or 'user' (a folder the user made)."""
    if character.bundled:
        return "bundled"
    return "imported" if character.raw_card is not None else "user"


def find_character(name_or_id: str, *, notice: Callable[[str], None] | None = None) -> Character:
    """`Library.find` without an index: every folder is read."""
    return Library().find(name_or_id, notice=notice)


def default_character() -> Character:
    """Suzune when she is there, else the first character by id."""
    return Library().default()
