"""Migration 0024: the story's words found in any form."""

from __future__ import annotations

from omoide.store.migrations.record import Migration

MEMORY_INDEX: list[Migration] = [
    Migration(
        "0024_stemmed_messages_fts",
        """
        -- Memories that come to mind and search find a word in any of its forms
        -- ("realize" finds "realized", "camping" finds "camped"): the porter
        -- stemmer before unicode61. The triggers on messages keep the index as they did.
        DROP TABLE IF EXISTS messages_fts;
        CREATE VIRTUAL TABLE messages_fts USING fts5(
            content, content='messages', content_rowid='id', tokenize='porter unicode61 remove_diacritics 2'
        );
        INSERT INTO messages_fts (messages_fts) VALUES ('rebuild');
        """,
    ),
]

MEMORY_INDEX.append(
    Migration(
        "0025_message_vectors",
        """
        -- Each message's static vector (memory/meaning.py), made once as it leaves the
        -- window and kept with it, so a session does not make them all again. `model`
        -- names the vectors' source: another source's are made anew.
        CREATE TABLE IF NOT EXISTS message_vectors (
            message_id INTEGER PRIMARY KEY REFERENCES messages(id),
            chat_id    INTEGER NOT NULL REFERENCES chats(id),
            model      TEXT NOT NULL,
            vector     BLOB NOT NULL
        );
        CREATE INDEX IF NOT EXISTS message_vectors_by_chat ON message_vectors(chat_id, message_id);
        """,
    )
)
