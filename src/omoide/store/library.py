"""The library index in the database (migration 0022_library_index).

The library (characters/library.py) is synchronous and runs before and
beside the chat's own connection, so the index has a small sqlite3
connection of its own on the same file. The index is a cache of the folders:
when it cannot be read or written (no database yet, locked, a full disk) the
library reads the folders as it did without one, and says so only in the log.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from omoide.domain.library import IndexedCard
from omoide.domain.naming import aliases, first_words

log = logging.getLogger(__name__)

BUSY_TIMEOUT_S = 10.0
WORDS_PER_QUERY = 500
"""Words looked up per statement: well under SQLite's limit on bound values."""
_COLUMNS = "folder, bundled, stamp, name, nickname, about, kind, problem, hint"


def _card(row: sqlite3.Row | tuple[object, ...]) -> IndexedCard:
    folder, bundled, stamp, name, nickname, about, kind, problem, hint = row
    return IndexedCard(str(folder), bool(bundled), str(stamp), str(name), str(nickname), str(about), str(kind),
                       str(problem), str(hint))


class CardIndexFile:
    """The index of the database at `path` (made by `Store.open`'s migrations).
    Each call opens and closes its own connection: a library lives as long as a
    chat, and holds no file open in between."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @contextmanager
    def _connection(self) -> Iterator[sqlite3.Connection | None]:
        if not self.path.is_file():
            yield None
            return
        try:
            conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
        except sqlite3.Error as exc:
            log.warning("the library index in %s cannot be opened (%s); the character folders are read instead", self.path, exc)
            yield None
            return
        try:
            found = conn.execute("SELECT count(*) FROM sqlite_schema WHERE type = 'table' "
                                 "AND name IN ('library_cards', 'library_words')").fetchone()
            yield conn if found == (2,) else None  # not yet migrated: the next Store.open adds the tables
        finally:
            conn.close()

    def _read(self, sql: str, params: Sequence[object] = ()) -> list[tuple[object, ...]]:
        try:
            with self._connection() as conn:
                return [] if conn is None else list(conn.execute(sql, params).fetchall())
        except sqlite3.Error as exc:
            log.warning("the library index in %s cannot be read (%s)", self.path, exc)
            return []

    def _read_if(self, dirs: dict[str, str], statements: Sequence[tuple[str, Sequence[object]]]) -> list[tuple[object, ...]] | None:
        """The rows of `statements`, read in one connection only while the index's
        folder stamps are `dirs`; None when they are not, or it cannot be read."""
        try:
            with self._connection() as conn:
                if conn is None:
                    return None
                recorded = self._dirs(conn)
                if any(recorded.get(which) != stamp for which, stamp in dirs.items()):
                    return None
                return [row for sql, params in statements for row in conn.execute(sql, params).fetchall()]
        except sqlite3.Error as exc:
            log.warning("the library index in %s cannot be read (%s)", self.path, exc)
            return None

    @staticmethod
    def _dirs(conn: sqlite3.Connection) -> dict[str, str]:
        return {str(which): str(stamp) for which, stamp in conn.execute("SELECT which, stamp FROM library_dirs")}

    def dirs(self) -> dict[str, str]:
        """The stamps of the characters folders when the index was last brought up to date."""
        return {str(which): str(stamp) for which, stamp in self._read("SELECT which, stamp FROM library_dirs")}

    def cards(self) -> list[IndexedCard]:
        return [_card(row) for row in self._read(f"SELECT {_COLUMNS} FROM library_cards ORDER BY folder, bundled DESC")]

    def names(self) -> list[IndexedCard]:
        """Every entry with its names only (no stamp, no description): for naming characters."""
        rows = self._read("SELECT folder, bundled, '', name, nickname, '', kind, problem, '' FROM library_cards "
                          "ORDER BY folder, bundled DESC")
        return [_card(row) for row in rows]

    def ids(self) -> list[str]:
        """The id of every folder that could be read, sorted."""
        return [str(row[0]) for row in self._read("SELECT DISTINCT folder FROM library_cards WHERE problem = '' ORDER BY folder")]

    def named_with_if(self, words: Collection[str], dirs: dict[str, str]) -> list[IndexedCard] | None:
        """The entries (names only, as `names`) of every folder where an entry has
        a name beginning with one of `words` (domain/naming.py), by folder, bundled
        first; read only while the index's folder stamps are `dirs` (else None),
        checked in the same connection: a turn asks this, and opens the file, once."""
        ordered = sorted(set(words))
        statements = [("SELECT folder, bundled, '', name, nickname, '', kind, problem, '' FROM library_cards "
                       "WHERE bundled IN (0, 1) AND folder IN (SELECT folder FROM library_words WHERE word IN "
                       f"({', '.join('?' * len(chunk))}))", chunk)
                      for chunk in (ordered[start:start + WORDS_PER_QUERY] for start in range(0, len(ordered), WORDS_PER_QUERY))]
        rows = self._read_if(dirs, statements)
        if rows is None:
            return None
        found: dict[tuple[bool, str], IndexedCard] = {}
        for card in map(_card, rows):
            found[(card.bundled, card.folder)] = card
        return [found[key] for key in sorted(found, key=lambda k: (k[1], not k[0]))]

    def lookup(self, key: str) -> list[IndexedCard]:
        """The folders whose id, name or nickname is `key` (casefolded), by id."""
        rows = self._read(f"SELECT {_COLUMNS} FROM library_cards WHERE key_id = ? OR key_name = ? OR key_nickname = ? "
                          "ORDER BY folder, bundled DESC", (key, key, key))
        return [_card(row) for row in rows]

    def write(self, dirs: dict[str, str], changed: Sequence[IndexedCard], removed: Sequence[tuple[bool, str]]) -> None:
        try:
            with self._connection() as conn:
                if conn is None:
                    return
                with conn:  # a transaction: committed whole or rolled back
                    conn.execute("BEGIN IMMEDIATE")
                    conn.executemany("DELETE FROM library_cards WHERE bundled = ? AND folder = ?",
                                     [(int(bundled), folder) for bundled, folder in removed])
                    conn.executemany("DELETE FROM library_words WHERE bundled = ? AND folder = ?",
                                     [*((int(bundled), folder) for bundled, folder in removed),
                                      *((int(c.bundled), c.folder) for c in changed)])
                    conn.executemany(
                        f"INSERT OR REPLACE INTO library_cards ({_COLUMNS}, key_id, key_name, key_nickname) "
                        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        [(c.folder, int(c.bundled), c.stamp, c.name, c.nickname, c.about, c.kind, c.problem, c.hint,
                          c.folder.casefold(), c.name.casefold(), c.nickname.casefold()) for c in changed],
                    )
                    conn.executemany(
                        "INSERT OR IGNORE INTO library_words (word, bundled, folder) VALUES (?, ?, ?)",
                        [(word, int(c.bundled), c.folder) for c in changed if c.readable for word in first_words(aliases(c))],
                    )
                    conn.executemany("INSERT OR REPLACE INTO library_dirs (which, stamp) VALUES (?, ?)", list(dirs.items()))
        except sqlite3.Error as exc:  # a cache: the folders stay the truth, read again next time
            log.warning("the library index in %s cannot be written (%s)", self.path, exc)

    def close(self) -> None:
        """Nothing is held open between calls."""
