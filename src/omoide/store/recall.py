"""Full-text candidates for recall: messages (the existing index) and diary
entries, with their bm25 relevance, and the path they must lie on."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from omoide.store import rows
from omoide.store.db import Database
from omoide.store.paths import ALONE_AT_DEPTH, walk_up

SNIPPET_TOKENS = 24
_COUNTS_PER_STATEMENT = 50


@dataclass(frozen=True, slots=True)
class Candidate:
    kind: str
    """'message' or 'diary'."""
    id: int
    message_id: int
    """The message itself, or the one the diary entry was written at."""
    depth: int
    role: str
    """The message's role; 'diary' for a diary entry."""
    created_at: datetime
    excerpt: str
    relevance: float
    """-bm25: higher is more relevant."""
    owner: str | None = None
    """A diary entry's owner (scenes); None for messages and entries written for everyone."""
    speaker: str | None = None
    """Who wrote a reply in a scene (None: the chat's character)."""
    text: str = ""
    """A message's whole content, when asked for instead of the excerpt (`candidates(whole=True)`)."""


def fts_any(terms: Sequence[str]) -> str:
    """An FTS5 query matching any of the words, each quoted (no syntax errors possible)."""
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)


class RecallRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def said_with(self, chat_id: int, terms: Sequence[str], *, after: int = 0,
                        limit: int | None = None) -> list[tuple[int, datetime, str]]:
        """Your messages of the chat (every branch) newer than message `after`
        holding any of `terms`, newest first: (id, when, text). Only the index's
        matches are read, newest first (until `limit`, if given). CROSS JOIN
        keeps that order of the loops: left to choose, SQLite walked the chat's
        messages newest first and asked the index about each one, a scan of the
        whole chat."""
        if not terms:
            return []
        rows_ = await self.db.all(
            """SELECT m.id, m.created_at, m.content FROM messages_fts CROSS JOIN messages m ON m.id = messages_fts.rowid
               WHERE messages_fts MATCH ? AND messages_fts.rowid > ? AND m.chat_id = ? AND m.role = 'user'
               ORDER BY messages_fts.rowid DESC LIMIT ?""",
            (fts_any(terms), after, chat_id, -1 if limit is None else limit),
        )
        return [(int(r["id"]), rows.ts(r["created_at"]), str(r["content"])) for r in rows_]

    async def candidates(self, chat_id: int, terms: Sequence[str], *, limit: int = 200,
                         messages: bool = True, diary: bool = True, whole: bool = False) -> list[Candidate]:
        """The `limit` most relevant messages and diary entries of the chat (all
        branches); with `whole`, each message's whole content instead of an excerpt
        (the passages cut their own: no snippet made, no second read for the text)."""
        if not terms:
            return []
        query = fts_any(terms)
        found: list[Candidate] = []
        if messages:
            excerpt = "'' AS excerpt, m.content" if whole else \
                f"snippet(messages_fts, 0, '', '', '…', {SNIPPET_TOKENS}) AS excerpt, '' AS content"
            result = await self.db.all(
                f"""SELECT m.id, m.depth, m.role, m.created_at, m.speaker, bm25(messages_fts) AS rank, {excerpt}
                    FROM messages_fts JOIN messages m ON m.id = messages_fts.rowid
                    WHERE messages_fts MATCH ? AND m.chat_id = ? ORDER BY rank LIMIT ?""",
                (query, chat_id, limit),
            )
            found += [Candidate("message", r["id"], r["id"], r["depth"], r["role"], rows.ts(r["created_at"]), r["excerpt"], -r["rank"],
                                speaker=r["speaker"], text=r["content"]) for r in result]
        if diary:
            result = await self.db.all(
                f"""SELECT d.id, d.message_id, m.depth, d.created_at, d.owner, bm25(diary_fts) AS rank,
                           snippet(diary_fts, 0, '', '', '…', {SNIPPET_TOKENS}) AS excerpt
                    FROM diary_fts JOIN diary_entries d ON d.id = diary_fts.rowid JOIN messages m ON m.id = d.message_id
                    WHERE diary_fts MATCH ? AND d.chat_id = ? AND d.author != 'compression' ORDER BY rank LIMIT ?""",
                (query, chat_id, limit),
            )
            found += [Candidate("diary", r["id"], r["message_id"], r["depth"], "diary", rows.ts(r["created_at"]), r["excerpt"], -r["rank"],
                                r["owner"]) for r in result]
        return found

    async def said_between(self, chat_id: int, after: int, before: int, *, limit: int) -> list[tuple[int, str]]:
        """The chat's messages and replies (every branch) with ids after `after` and
        before `before`, oldest first, at most `limit`: (id, content)."""
        result = await self.db.all(
            "SELECT id, content FROM messages WHERE chat_id = ? AND id > ? AND id < ? "
            "AND role IN ('user', 'assistant') ORDER BY id LIMIT ?", (chat_id, after, before, limit))
        return [(int(r[0]), str(r[1])) for r in result]

    async def messages(self, message_ids: Sequence[int]) -> list[Candidate]:
        """`message_ids` as candidates with their whole text and no word relevance (found by meaning)."""
        if not message_ids:
            return []
        marks = ",".join(str(int(i)) for i in message_ids)
        result = await self.db.all(
            f"SELECT id, depth, role, created_at, speaker, content FROM messages WHERE id IN ({marks})")
        return [Candidate("message", r["id"], r["id"], r["depth"], r["role"], rows.ts(r["created_at"]), "", 0.0,
                          speaker=r["speaker"], text=r["content"]) for r in result]

    async def beside(self, message_ids: Sequence[int]) -> tuple[dict[int, Candidate], dict[int, list[Candidate]]]:
        """The line before each of `message_ids` (its parent) and the lines after it
        (its children, every branch: the caller keeps those on its path), whole."""
        if not message_ids:
            return {}, {}
        marks = ",".join(str(int(i)) for i in message_ids)
        columns = "m.id, m.depth, m.role, m.created_at, m.speaker, m.content"
        parents = await self.db.all(
            f"SELECT c.id AS of, {columns} FROM messages c JOIN messages m ON m.id = c.parent_id WHERE c.id IN ({marks})")
        children = await self.db.all(f"SELECT m.parent_id AS of, {columns} FROM messages m WHERE m.parent_id IN ({marks})")

        def candidate(r: Any) -> Candidate:
            return Candidate("message", r["id"], r["id"], r["depth"], r["role"], rows.ts(r["created_at"]), "", 0.0,
                             speaker=r["speaker"], text=r["content"])

        after: dict[int, list[Candidate]] = {}
        for r in children:
            after.setdefault(int(r["of"]), []).append(candidate(r))
        return {int(r["of"]): candidate(r) for r in parents}, after

    async def on_path(self, head_id: int, message_ids: Sequence[int]) -> set[int]:
        """Which of `message_ids` lie on the path to `head_id`: those alone at their
        depth in the head's chat at once, the rest by one walk up to the oldest of
        them (a long chat's path is thousands of messages; its branches are few)."""
        if not message_ids:
            return set()
        marks = ",".join(str(int(i)) for i in message_ids)
        result = await self.db.all(
            f"""SELECT m.id, m.depth, {ALONE_AT_DEPTH} AS alone FROM messages m JOIN messages h ON h.id = ?
                WHERE m.id IN ({marks}) AND m.chat_id = h.chat_id AND m.depth <= h.depth""",
            (head_id,),
        )
        found = {r[0] for r in result if r[2]}
        branched = {r[0]: r[1] for r in result if not r[2]}
        if branched:
            cte = walk_up("up", start=":head", until="up.depth > :depth")
            walked = await self.db.all(
                f"WITH RECURSIVE {cte} SELECT id FROM up WHERE id IN ({','.join(map(str, branched))})",
                {"head": head_id, "depth": min(branched.values())},
            )
            found |= {r[0] for r in walked}
        return found

    async def importance(self, message_ids: Sequence[int]) -> dict[int, int]:
        """The highest importance of a diary entry written at each of `message_ids` (those that have one)."""
        if not message_ids:
            return {}
        marks = ",".join(str(int(i)) for i in message_ids)
        result = await self.db.all(
            f"SELECT message_id, MAX(importance) FROM diary_entries WHERE message_id IN ({marks}) "
            "AND importance IS NOT NULL GROUP BY message_id")
        return {r[0]: r[1] for r in result}

    async def said_between_times(self, chat_id: int, start: datetime, end: datetime, *, limit: int) -> list[Candidate]:
        """The chat's messages and replies (every branch) stored from `start` until `end`, oldest first, whole
        (stored in UTC, as `Database.now_iso` writes them)."""
        result = await self.db.all(
            "SELECT id, depth, role, created_at, speaker, content FROM messages WHERE chat_id = ? AND created_at >= ? "
            "AND created_at < ? AND role IN ('user', 'assistant') ORDER BY id LIMIT ?",
            (chat_id, *(moment.astimezone(UTC).isoformat(timespec="microseconds") for moment in (start, end)), limit))
        return [Candidate("message", r["id"], r["id"], r["depth"], r["role"], rows.ts(r["created_at"]), "", 0.0,
                          speaker=r["speaker"], text=r["content"]) for r in result]

    async def message_count(self) -> int:
        """How many messages are stored (every chat): what `frequencies` counts are out of."""
        row = await self.db.one("SELECT count(*) FROM messages")
        return int(row[0]) if row else 0

    async def frequencies(self, terms: Sequence[str], *, at_most: int | None = None) -> dict[str, int]:
        """How many stored messages (every chat, every branch) hold each of `terms`,
        counted up to `at_most` when given (a word in every message is not read to
        its end): one count over each term's index entry, never a scan of the
        messages; one statement for a turn's dozen terms (a statement costs a hop
        to SQLite's thread)."""
        found: dict[str, int] = {}
        limit = -1 if at_most is None else at_most
        for start in range(0, len(terms), _COUNTS_PER_STATEMENT):
            chunk = list(terms[start: start + _COUNTS_PER_STATEMENT])
            counts = ", ".join("(SELECT count(*) FROM (SELECT 1 FROM messages_fts WHERE messages_fts MATCH ? LIMIT ?))"
                               for _ in chunk)
            row = await self.db.one(f"SELECT {counts}", [value for term in chunk for value in (fts_any([term]), limit)])
            found.update({term: int(row[n]) if row else 0 for n, term in enumerate(chunk)})
        return found
