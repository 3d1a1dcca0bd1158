"""Migrations 0013 on: weights and mentions, the world, scenes, indexes, lore timers, memory owners."""

from __future__ import annotations

from omoide.store.migrations.record import Migration

WORLD_AND_SCENES: list[Migration] = []

WORLD_AND_SCENES.append(
    Migration(
        "0013_profile_weights",
        """
        -- Weight: how much a diary entry matters (1-5) and the feeling attached.
        -- origin_id: the entry this one was kept from, word for word, by a diary compression.
        ALTER TABLE diary_entries ADD COLUMN importance INTEGER;
        ALTER TABLE diary_entries ADD COLUMN emotion TEXT;
        ALTER TABLE diary_entries ADD COLUMN origin_id INTEGER REFERENCES diary_entries(id);

        -- The memories (of one kind, ids comma-separated) a message brings up again.
        -- Anchored to the tree like the diary:
        -- prev_id links to the previous mention on the path, and each message carries
        -- the newest mention above it, so the mentions in force at a head are a short walk.
        CREATE TABLE memory_mentions (
            id          INTEGER PRIMARY KEY,
            chat_id     INTEGER NOT NULL REFERENCES chats(id),
            message_id  INTEGER NOT NULL REFERENCES messages(id),
            prev_id     INTEGER REFERENCES memory_mentions(id),
            kind        TEXT NOT NULL,
            memory_ids  TEXT NOT NULL,
            created_at  TEXT NOT NULL,
            UNIQUE (kind, message_id)
        );
        CREATE INDEX mentions_by_message ON memory_mentions(message_id, id);
        ALTER TABLE messages ADD COLUMN mention_id INTEGER REFERENCES memory_mentions(id);

        -- Memory tiers hidden from this chat's prompt by /amnesia (comma-separated).
        ALTER TABLE chats ADD COLUMN amnesia TEXT;

        -- The user profile every character knows. Fields are append-only versions
        -- (the newest per key is in force); facts are never deleted, only retired.
        CREATE TABLE profile_fields (
            id          INTEGER PRIMARY KEY,
            key         TEXT NOT NULL CHECK (key IN ('name', 'address', 'pronouns')),
            value       TEXT NOT NULL,
            created_at  TEXT NOT NULL
        );
        CREATE INDEX profile_fields_by_key ON profile_fields(key, id);
        CREATE TABLE profile_facts (
            id          INTEGER PRIMARY KEY,
            content     TEXT NOT NULL,
            status      TEXT NOT NULL CHECK (status IN ('active', 'proposed', 'rejected', 'removed')),
            source      TEXT NOT NULL DEFAULT '',
            chat_id     INTEGER REFERENCES chats(id),
            message_id  INTEGER REFERENCES messages(id),
            created_at  TEXT NOT NULL,
            decided_at  TEXT
        );

        -- Diary entries in the full-text index too, for recall.
        CREATE VIRTUAL TABLE diary_fts USING fts5(
            content, content='diary_entries', content_rowid='id', tokenize='unicode61 remove_diacritics 2'
        );
        INSERT INTO diary_fts (rowid, content) SELECT id, content FROM diary_entries;
        CREATE TRIGGER diary_fts_insert AFTER INSERT ON diary_entries BEGIN
            INSERT INTO diary_fts (rowid, content) VALUES (new.id, new.content);
        END;
        """,
    )
)

WORLD_AND_SCENES.append(
    Migration(
            "0014_world",
            """
            -- A conversation: a range of one chat's path (first_id down to end_id) that
            -- ended, and whose end-of-conversation pass updates world memory.
            CREATE TABLE world_conversations (
                id            INTEGER PRIMARY KEY,
                chat_id       INTEGER NOT NULL REFERENCES chats(id),
                first_id      INTEGER REFERENCES messages(id),
                end_id        INTEGER NOT NULL REFERENCES messages(id),
                participants  TEXT NOT NULL,
                mentions      TEXT NOT NULL DEFAULT '[]',
                reason        TEXT NOT NULL,
                state         TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'done', 'incomplete')),
                in_force      INTEGER NOT NULL DEFAULT 1,
                attempts      INTEGER NOT NULL DEFAULT 0,
                ended_at      TEXT NOT NULL
            );
            CREATE INDEX world_conversations_by_chat ON world_conversations(chat_id, id);
            CREATE INDEX world_conversations_by_state ON world_conversations(state, id);

            -- The append-only log: every change, failure, edit, retract and reinstate,
            -- with the text before and after, the template and the model.
            CREATE TABLE world_updates (
                id               INTEGER PRIMARY KEY,
                conversation_id  INTEGER REFERENCES world_conversations(id),
                message_id       INTEGER REFERENCES messages(id),
                owner            TEXT NOT NULL,
                about            TEXT NOT NULL DEFAULT '',
                field            TEXT NOT NULL,
                step             TEXT NOT NULL,
                kind             TEXT NOT NULL CHECK (kind IN ('llm', 'rule', 'edit', 'retract', 'reinstate', 'failed', 'kept')),
                before           TEXT,
                after            TEXT,
                template         TEXT,
                model            TEXT,
                error            TEXT,
                created_at       TEXT NOT NULL
            );
            CREATE INDEX world_updates_by_conversation ON world_updates(conversation_id, id);
            CREATE INDEX world_updates_by_owner ON world_updates(owner, id);

            -- Versioned values: the newest version of (owner, about, field) is in force;
            -- older ones stay readable. Never updated, never deleted.
            CREATE TABLE world_versions (
                id          INTEGER PRIMARY KEY,
                owner       TEXT NOT NULL,
                about       TEXT NOT NULL DEFAULT '',
                field       TEXT NOT NULL,
                version     INTEGER NOT NULL,
                value       TEXT NOT NULL,
                update_id   INTEGER NOT NULL REFERENCES world_updates(id),
                created_at  TEXT NOT NULL,
                UNIQUE (owner, about, field, version)
            );
            CREATE INDEX world_versions_by_field ON world_versions(owner, about, field, id);
            CREATE INDEX world_versions_by_update ON world_versions(update_id);
            """,
    )
)

WORLD_AND_SCENES.append(
    Migration(
        "0015_scenes",
        """
        -- Group scenes. `speaker` is the character (id) who wrote an assistant
        -- message in a scene, or the character a stage note is about; NULL in a
        -- one-on-one chat (the chat's character). `stage` marks a stage note
        -- ('invite', 'leave'): a system message in the tree, so branches, swipes
        -- and /undo carry who is present.
        ALTER TABLE messages ADD COLUMN speaker TEXT;
        ALTER TABLE messages ADD COLUMN stage TEXT;
        CREATE INDEX messages_stage ON messages(chat_id, id) WHERE stage IS NOT NULL;

        -- Whose diary an entry is in: the speaker of the message it was written
        -- at; NULL for entries every character of the chat reads.
        ALTER TABLE diary_entries ADD COLUMN owner TEXT;

        -- Everyone ever in a chat, in the order they came; `opening` marks those
        -- present from its first message (the others came with a stage note).
        CREATE TABLE chat_participants (
            chat_id    INTEGER NOT NULL REFERENCES chats(id),
            character  TEXT NOT NULL,
            position   INTEGER NOT NULL,
            opening    INTEGER NOT NULL DEFAULT 0,
            added_at   TEXT NOT NULL,
            PRIMARY KEY (chat_id, character)
        );
        """,
    )
)


WORLD_AND_SCENES.append(
    Migration(
        "0016_messages_by_depth",
        """
        -- A depth where the chat has one message only: that message lies on every
        -- path through that depth, so a slice of a path starts its walk there
        -- (Ctrl+Home on a long chat) instead of at the head.
        CREATE INDEX messages_by_depth ON messages(chat_id, depth);
        """,
    )
)


WORLD_AND_SCENES.append(
    Migration(
        "0017_streaming_messages",
        """
        -- Opening a chat marks the replies a dead process left streaming as
        -- interrupted: with this index that finds the few such rows instead of
        -- reading every message of the chat (13 ms at 100,000 messages).
        CREATE INDEX messages_streaming ON messages(chat_id) WHERE status = 'streaming';
        """,
    ),
)


WORLD_AND_SCENES.append(
    Migration(
        "0018_lore_timers",
        """
        -- A lore entry with a sticky or cooldown that fired anew, anchored at the
        -- reply its prompt was for: the timed effects at a head are the records on
        -- the path to it (characters/lore_state.py), so branches, swipes and /undo
        -- each see their own.
        CREATE TABLE lore_timers (
            chat_id      INTEGER NOT NULL REFERENCES chats(id),
            message_id   INTEGER NOT NULL REFERENCES messages(id),
            entry_key    TEXT NOT NULL,
            chat_length  INTEGER NOT NULL,
            created_at   TEXT NOT NULL,
            PRIMARY KEY (message_id, entry_key)
        );
        """,
    ),
)


WORLD_AND_SCENES.append(
    Migration(
        "0019_message_errors",
        """
        -- Why a reply failed or was cut off by an error, as the user was told: the
        -- transcript keeps showing it under the message (and after a restart).
        ALTER TABLE messages ADD COLUMN error TEXT;
        """,
    ),
)


WORLD_AND_SCENES.append(
    Migration(
        "0020_memory_owners",
        """
        -- Knowledge boundaries in group scenes. A summary or memo with an owner
        -- is that character's own, made from the messages it witnessed (it came
        -- in after the chat's memory began, or was away for part of it); NULL:
        -- the chat's, read by whoever witnessed everything it covers.
        ALTER TABLE summaries ADD COLUMN owner TEXT;
        ALTER TABLE memos ADD COLUMN owner TEXT;
        CREATE INDEX summaries_by_owner ON summaries(anchor_id, owner);
        """,
    ),
)

