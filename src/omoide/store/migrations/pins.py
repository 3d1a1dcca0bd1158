"""Migration 0021: pinned facts."""

from __future__ import annotations

from omoide.store.migrations.record import Migration

PINS: list[Migration] = [
    Migration(
        "0021_pins",
        """
        -- Facts kept in every prompt of a character, in every chat of it, whatever
        -- is compressed (/pin). Per character, not anchored to a chat's tree: a pin
        -- holds on every branch. The text is copied when pinned (a pinned message
        -- or diary line keeps its words); removing one sets removed_at, never deletes.
        CREATE TABLE pins (
            id          INTEGER PRIMARY KEY,
            character   TEXT NOT NULL,
            content     TEXT NOT NULL,
            source      TEXT NOT NULL,
            chat_id     INTEGER REFERENCES chats(id),
            message_id  INTEGER REFERENCES messages(id),
            diary_id    INTEGER REFERENCES diary_entries(id),
            created_at  TEXT NOT NULL,
            removed_at  TEXT
        );
        CREATE INDEX pins_by_character ON pins(character, id) WHERE removed_at IS NULL;
        """,
    ),
]
