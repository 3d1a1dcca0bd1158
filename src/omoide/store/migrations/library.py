"""Migrations 0022 and 0023: the library index (store/library.py)."""

from __future__ import annotations

from omoide.store.migrations.record import Migration

LIBRARY: list[Migration] = [
    Migration(
        "0022_library_index",
        """
        -- The library index: each character folder's names and the start of its
        -- description as last read, with a stamp of its files (inode, size,
        -- modification time), so a command reads only the cards it
        -- uses. key_* are the casefolded id, name and nickname, for lookups.
        -- library_dirs stamps the characters folders themselves: while theirs is
        -- unchanged no folder was added, removed or renamed.
        CREATE TABLE library_cards (
            folder TEXT NOT NULL,
            bundled INTEGER NOT NULL,
            stamp TEXT NOT NULL,
            name TEXT NOT NULL,
            nickname TEXT NOT NULL,
            about TEXT NOT NULL,
            kind TEXT NOT NULL,
            problem TEXT NOT NULL,
            hint TEXT NOT NULL,
            key_id TEXT NOT NULL,
            key_name TEXT NOT NULL,
            key_nickname TEXT NOT NULL,
            PRIMARY KEY (bundled, folder)
        );
        CREATE INDEX library_cards_by_id ON library_cards(key_id);
        CREATE INDEX library_cards_by_name ON library_cards(key_name);
        CREATE INDEX library_cards_by_nickname ON library_cards(key_nickname);
        CREATE TABLE library_dirs (which TEXT PRIMARY KEY, stamp TEXT NOT NULL);
        """,
    ),
    Migration(
        "0023_library_words",
        """
        -- The word each name of an indexed character begins with (its id, name,
        -- nickname and first name, lowercased: domain/naming.py), so the words of
        -- a message find the characters it may name without reading every name.
        -- The index is a cache: emptied here, it is read again from the folders
        -- by the next command, which fills in the words.
        CREATE TABLE library_words (
            word TEXT NOT NULL,
            bundled INTEGER NOT NULL,
            folder TEXT NOT NULL,
            PRIMARY KEY (word, bundled, folder)
        ) WITHOUT ROWID;
        CREATE INDEX library_words_by_folder ON library_words(bundled, folder);
        DELETE FROM library_cards;
        DELETE FROM library_dirs;
        """,
    ),
]
