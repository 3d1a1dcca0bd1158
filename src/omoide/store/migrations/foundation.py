"""Migrations 0001-0011: the message tree, its memory tiers, search, the memo book, imports."""

from __future__ import annotations

from omoide.store.migrations.record import Migration

FOUNDATION: list[Migration] = [
    Migration(
        "0001_message_tree",
        """
        CREATE TABLE chats (
            id          INTEGER PRIMARY KEY,
            character   TEXT NOT NULL,
            title       TEXT NOT NULL DEFAULT '',
            head_id     INTEGER REFERENCES messages(id),
            archived    INTEGER NOT NULL DEFAULT 0,
            created_at  TEXT NOT NULL,
            updated_at  TEXT NOT NULL
        );
        CREATE INDEX chats_by_character ON chats(character, archived, updated_at);

        -- A message tree: never deleted, never moved. summary_id / diary_id point at
        -- the newest summary and diary entry on the path above the message, so the
        -- memory in force at any head is read, not recomputed.
        CREATE TABLE messages (
            id            INTEGER PRIMARY KEY,
            chat_id       INTEGER NOT NULL REFERENCES chats(id),
            parent_id     INTEGER REFERENCES messages(id),
            role          TEXT NOT NULL CHECK (role IN ('system', 'user', 'assistant', 'tool')),
            content       TEXT NOT NULL,
            tool_calls    TEXT,
            tool_call_id  TEXT,
            created_at    TEXT NOT NULL,
            status        TEXT NOT NULL DEFAULT 'complete',
            depth         INTEGER NOT NULL,
            summary_id    INTEGER REFERENCES summaries(id),
            diary_id      INTEGER REFERENCES diary_entries(id)
        );
        CREATE INDEX messages_by_parent ON messages(parent_id);
        CREATE INDEX messages_by_chat ON messages(chat_id, id);
        """,
    ),
    Migration(
        "0002_memory",
        """
        CREATE TABLE summaries (
            id           INTEGER PRIMARY KEY,
            chat_id      INTEGER NOT NULL REFERENCES chats(id),
            anchor_id    INTEGER NOT NULL REFERENCES messages(id),
            covers_to_id INTEGER REFERENCES messages(id),
            diary_to_id  INTEGER REFERENCES diary_entries(id),
            content      TEXT NOT NULL,
            created_at   TEXT NOT NULL
        );
        CREATE INDEX summaries_by_anchor ON summaries(anchor_id, id);

        CREATE TABLE diary_entries (
            id          INTEGER PRIMARY KEY,
            chat_id     INTEGER NOT NULL REFERENCES chats(id),
            message_id  INTEGER NOT NULL REFERENCES messages(id),
            prev_id     INTEGER REFERENCES diary_entries(id),
            author      TEXT NOT NULL CHECK (author IN ('character', 'user', 'compression')),
            content     TEXT NOT NULL,
            created_at  TEXT NOT NULL
        );
        CREATE INDEX diary_by_message ON diary_entries(message_id, id);
        """,
    ),
    Migration(
        "0003_branches",
        """
        CREATE TABLE branches (
            chat_id     INTEGER NOT NULL REFERENCES chats(id),
            name        TEXT NOT NULL,
            message_id  INTEGER NOT NULL REFERENCES messages(id),
            created_at  TEXT NOT NULL,
            auto        INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (chat_id, name)
        );
        """,
    ),
    Migration(
        "0004_full_text_search",
        """
        CREATE VIRTUAL TABLE messages_fts USING fts5(
            content, content='messages', content_rowid='id', tokenize='unicode61 remove_diacritics 2'
        );
        INSERT INTO messages_fts (rowid, content) SELECT id, content FROM messages;
        CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
            INSERT INTO messages_fts (rowid, content) VALUES (new.id, new.content);
        END;
        CREATE TRIGGER messages_fts_update AFTER UPDATE OF content ON messages BEGIN
            INSERT INTO messages_fts (messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
            INSERT INTO messages_fts (rowid, content) VALUES (new.id, new.content);
        END;
        """,
    ),
    Migration(
        "0005_chat_persona",
        """
        ALTER TABLE chats ADD COLUMN persona TEXT;
        """,
    ),
]

FOUNDATION.append(
    Migration(
        "0010_memo_book",
        """
        -- A memo is anchored to the last message of its batch (or, written by you, to
        -- the head you wrote it at) and is in force on that message's subtree. The
        -- memo row never changes but for `version_id`, which points at its newest
        -- version: making, failing (a gap), editing, hiding and retrying each add one.
        CREATE TABLE memos (
            id          INTEGER PRIMARY KEY,
            chat_id     INTEGER NOT NULL REFERENCES chats(id),
            anchor_id   INTEGER NOT NULL REFERENCES messages(id),
            first_id    INTEGER REFERENCES messages(id),
            author      TEXT NOT NULL CHECK (author IN ('model', 'user')),
            version_id  INTEGER REFERENCES memo_versions(id),
            created_at  TEXT NOT NULL
        );
        CREATE INDEX memos_by_anchor ON memos(anchor_id, id);
        CREATE INDEX memos_by_chat ON memos(chat_id, id);
        CREATE INDEX memos_by_version ON memos(version_id);

        CREATE TABLE memo_versions (
            id          INTEGER PRIMARY KEY,
            memo_id     INTEGER NOT NULL REFERENCES memos(id),
            author      TEXT NOT NULL CHECK (author IN ('model', 'user')),
            status      TEXT NOT NULL CHECK (status IN ('ok', 'failed')),
            hidden      INTEGER NOT NULL DEFAULT 0,
            reason      TEXT,
            message_id  INTEGER REFERENCES messages(id),
            created_at  TEXT NOT NULL
        );
        CREATE INDEX memo_versions_by_memo ON memo_versions(memo_id, id);

        -- Each highlight is its own row, so search finds the one that matched.
        CREATE TABLE memo_highlights (
            id          INTEGER PRIMARY KEY,
            version_id  INTEGER NOT NULL REFERENCES memo_versions(id),
            position    INTEGER NOT NULL,
            text        TEXT NOT NULL
        );
        CREATE INDEX memo_highlights_by_version ON memo_highlights(version_id, position);

        CREATE VIRTUAL TABLE memo_fts USING fts5(
            text, content='memo_highlights', content_rowid='id', tokenize='unicode61 remove_diacritics 2'
        );
        CREATE TRIGGER memo_fts_insert AFTER INSERT ON memo_highlights BEGIN
            INSERT INTO memo_fts (rowid, text) VALUES (new.id, new.text);
        END;
        """,
    )
)

FOUNDATION.append(
    Migration(
        "0011_exchange_metadata",
        """
        -- What a chat file brought that omoide has no column for (SillyTavern's
        -- chat_metadata and create_date, each message's name, is_system and extra),
        -- kept as JSON so an export gives it back. message_id NULL: the chat's own.
        CREATE TABLE exchange_meta (
            chat_id     INTEGER NOT NULL REFERENCES chats(id),
            message_id  INTEGER REFERENCES messages(id),
            data        TEXT NOT NULL
        );
        CREATE UNIQUE INDEX exchange_meta_by_message ON exchange_meta(chat_id, ifnull(message_id, 0));
        """,
    )
)

