"""The queries every repository shares about paths in the message tree.

A message row carries pointers to the newest summary and diary entry on the
path *above* it (and to the newest memory mention); memory made *at* the
message itself is found by its anchor. `POINTERS` reads all three for the message aliased `m`, so the memory in force at
any head costs a few indexed lookups.
"""

from __future__ import annotations

NEWEST_SUMMARY = (
    "coalesce((SELECT id FROM summaries WHERE anchor_id = m.id AND owner IS NULL ORDER BY id DESC LIMIT 1), m.summary_id)"
)
"""The newest chat summary in force at message `m` (its own, or the one on the path
above it). A character's own summaries (scenes) are found by a walk (memory.py)."""
NEWEST_DIARY = "coalesce((SELECT id FROM diary_entries WHERE message_id = m.id ORDER BY id DESC LIMIT 1), m.diary_id)"
"""The newest diary entry in force at message `m`."""
NEWEST_MENTION = "coalesce((SELECT id FROM memory_mentions WHERE message_id = m.id ORDER BY id DESC LIMIT 1), m.mention_id)"
"""The newest memory mention in force at message `m`."""
POINTERS = f"{NEWEST_SUMMARY}, {NEWEST_DIARY}, {NEWEST_MENTION}"
ALONE_AT_DEPTH = "(SELECT count(*) FROM messages o WHERE o.chat_id = m.chat_id AND o.depth = m.depth) = 1"
"""Message `m` is the only one of its chat at its depth, so it lies on the path to
every message of the chat below it: no walk up is needed to tell (messages_by_depth)."""


def walk_up(name: str, *, start: str, columns: str = "id, parent_id, depth", until: str = "") -> str:
    """A recursive CTE `name(columns)` walking from the message `start` (an SQL
    expression) up to the root, one row per ancestor; `until` is an extra
    condition on the row reached so far (`name`) that must hold to go on."""
    m_columns = ", ".join(f"m.{c.strip()}" for c in columns.split(","))
    condition = f" WHERE {until}" if until else ""
    return (
        f"{name}({columns}) AS ("
        f"SELECT {columns} FROM messages WHERE id = {start} "
        f"UNION ALL SELECT {m_columns} FROM messages m JOIN {name} ON m.id = {name}.parent_id{condition})"
    )
