"""Turning SQLite rows into domain objects."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Collection, Mapping
from datetime import datetime

from omoide.domain.chat import (
    Branch,
    Chat,
    DiaryAuthor,
    DiaryEntry,
    FactStatus,
    Mention,
    Message,
    ProfileFact,
    MessageStatus,
    Role,
    Summary,
)

MESSAGE_COLUMNS = "id, chat_id, parent_id, role, content, tool_calls, tool_call_id, created_at, status, depth, speaker, stage, error"
M_MESSAGE_COLUMNS = ", ".join(f"m.{column.strip()}" for column in MESSAGE_COLUMNS.split(","))
"""The same columns for queries that join the messages table as `m`."""


def ts(value: str) -> datetime:
    return datetime.fromisoformat(value)


_ROLES = {role.value: role for role in Role}
_STATUSES = {status.value: status for status in MessageStatus}
"""Stored value -> member: a dict lookup, where calling the enum is slow (a turn reads hundreds of messages)."""


def message(row: sqlite3.Row) -> Message:
    return Message(
        id=row["id"],
        chat_id=row["chat_id"],
        parent_id=row["parent_id"],
        role=_ROLES.get(row["role"]) or Role(row["role"]),
        content=row["content"],
        created_at=ts(row["created_at"]),
        status=_STATUSES.get(row["status"]) or MessageStatus(row["status"]),
        tool_calls=json.loads(row["tool_calls"]) if row["tool_calls"] else None,
        tool_call_id=row["tool_call_id"],
        depth=row["depth"],
        speaker=row["speaker"],
        stage=row["stage"],
        error=row["error"],
    )


def chat(row: sqlite3.Row) -> Chat:
    keys = row.keys()
    return Chat(
        id=row["id"],
        character=row["character"],
        title=row["title"],
        head_id=row["head_id"],
        created_at=ts(row["created_at"]),
        updated_at=ts(row["updated_at"]),
        archived=bool(row["archived"]),
        message_count=(row["message_count"] or 0) if "message_count" in keys else 0,
        persona=row["persona"] if "persona" in keys else None,
        amnesia=tuple(t for t in (row["amnesia"] or "").split(",") if t) if "amnesia" in keys else (),
        cast=tuple(t for t in (row["cast_ids"] or "").split("\x1f") if t) if "cast_ids" in keys else (),
    )


def summary(row: sqlite3.Row) -> Summary:
    return Summary(
        id=row["id"],
        chat_id=row["chat_id"],
        anchor_id=row["anchor_id"],
        covers_to_id=row["covers_to_id"],
        diary_to_id=row["diary_to_id"],
        content=row["content"],
        created_at=ts(row["created_at"]),
        owner=row["owner"] if "owner" in row.keys() else None,
    )


def diary_entry(row: sqlite3.Row) -> DiaryEntry:
    return DiaryEntry(
        id=row["id"],
        chat_id=row["chat_id"],
        message_id=row["message_id"],
        content=row["content"],
        author=DiaryAuthor(row["author"]),
        created_at=ts(row["created_at"]),
        prev_id=row["prev_id"],
        importance=row["importance"],
        emotion=row["emotion"],
        origin_id=row["origin_id"],
        owner=row["owner"] if "owner" in row.keys() else None,
    )


def branch(row: sqlite3.Row) -> Branch:
    return Branch(
        chat_id=row["chat_id"],
        name=row["name"],
        message_id=row["message_id"],
        created_at=ts(row["created_at"]),
        auto=bool(row["auto"]),
    )


def mentions(row: sqlite3.Row, only: Mapping[str, Collection[int]] | None = None) -> list[Mention]:
    """One row holds every memory of one kind that a message brought up (with
    `only`, just those of the memories it names by kind)."""
    ids = [int(i) for i in row["memory_ids"].split(",") if i]
    if only is not None:
        wanted = only.get(row["kind"], ())
        ids = [i for i in ids if i in wanted]
        if not ids:
            return []
    moment = ts(row["created_at"])
    return [Mention(row["id"], row["kind"], i, row["message_id"], moment) for i in ids]


def profile_fact(row: sqlite3.Row) -> ProfileFact:
    return ProfileFact(
        id=row["id"],
        content=row["content"],
        status=FactStatus(row["status"]),
        source=row["source"],
        chat_id=row["chat_id"],
        message_id=row["message_id"],
        created_at=ts(row["created_at"]),
    )


MATCH_START = "\x02"
MATCH_END = "\x03"
"""What full-text search puts around a match in a snippet: characters no one
types, so brackets in the text itself are never taken for a match."""


def snippet_sql(table: str) -> str:
    return f"snippet({table}, 0, char(2), char(3), '…', 12)"


def bracketed(marked: str) -> str:
    """A marked snippet with its matches in [brackets], for a plain-text view."""
    return marked.replace(MATCH_START, "[").replace(MATCH_END, "]")
