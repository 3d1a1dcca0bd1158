"""Memory work a group scene needs beyond the chat's (memory/boundary.py says
who may read what).

- A character that cannot read the chat's summary (it came in after the
  summary began, or was away for part of it) gets a summary of its own, of
  the messages it witnessed, when its window grows past summary_threshold.
- A character that witnessed part of a memo's batch gets a memo of its own,
  of that part.
- The diary: each character's view is compressed on its own; an entry written
  for everyone that is carried over a compression keeps only the readers it
  had (`plan_diary`).

Requests are sent standalone, never as a continuation of a speaker's prompt:
that prompt holds what its speaker knows, which another character must not
come to remember through a summary.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass

from omoide.config.sections import MemorySettings
from omoide.domain.chat import DiaryEntry, MemoAuthor, Message, Role
from omoide.domain.witness import Attendance, Reader
from omoide.llm.base import ChatMessage
from omoide.memory.boundary import readable_summary, witnessed
from omoide.memory.diary import compression_due
from omoide.memory.events import MemoryEvent, MemoryWorkDone, MemoryWorkFailed
from omoide.memory.memo_work import MEMO_MAX_TOKENS, fallback_notice, write_memo
from omoide.memory.own_words import own_words_summary
from omoide.memory.memos import due_batches
from omoide.memory.summary import Compression, split_for_compression, validate_summary
from omoide.memory.weights import DEFAULT_IMPORTANCE, KEEP_VERBATIM
from omoide.store import Store
from omoide.store.memory import WINDOW_CAP

OWN_CHUNK_CAP = 80
"""Most messages one of a character's own compressions takes (a character that
cannot read a long chat summary catches up over several turns)."""
Complete = Callable[[list[ChatMessage], int], Awaitable[str]]


@dataclass(frozen=True, slots=True)
class DiaryPlan:
    reader: str | None
    """Whose diary view is compressed (None: a one-on-one chat's only diary)."""
    squeeze: list[DiaryEntry]
    keep: list[DiaryEntry]


def plan_diary(
    diary: Sequence[DiaryEntry], readers: Sequence[str | None], reads: Callable[[str | None, DiaryEntry], bool],
    present: frozenset[str | None], *, prompt_lines: int, compress_lines: int,
) -> tuple[list[DiaryPlan], list[tuple[DiaryEntry, str | None]]]:
    """Which readers' diaries are compressed now, and every entry carried over
    the compression with the owner its copy gets. An entry is carried for each
    reader that reads it and did not fold it (its diary was not compressed, or
    the entry is kept word for word). An entry written for everyone keeps no
    owner only while exactly those present at the compression still need it;
    otherwise each reader gets a copy of its own, so nobody comes to read, at
    the new anchor, what it never witnessed."""
    plans = []
    for reader in readers:
        view = [e for e in diary if reads(reader, e)]
        if not compression_due(view, prompt_lines=prompt_lines, compress_lines=compress_lines):
            continue
        keep = [e for e in view if not e.compressed and (e.importance or DEFAULT_IMPORTANCE) >= KEEP_VERBATIM]
        squeeze = [e for e in view if e not in keep]
        if len(squeeze) >= 2:  # else only important entries (and at most one old block): nothing to merge
            plans.append(DiaryPlan(reader, squeeze, keep))
    if not plans:
        return [], []
    planned = {p.reader: p for p in plans}
    carried: list[tuple[DiaryEntry, str | None]] = []
    for entry in diary:
        needed = [r for r in readers if reads(r, entry) and (r not in planned or entry in planned[r].keep)]
        if not needed:
            continue
        if entry.owner is not None or set(needed) == set(present):
            carried.append((entry, entry.owner))
        else:
            carried += [(entry, reader) for reader in needed]
    return plans, carried


class SceneMemory:
    def __init__(self, store: Store, chat_id: int, settings: MemorySettings, complete: Complete, *, own_words: bool = False) -> None:
        self.own_words = own_words
        """Summaries and memos keep the story's own sentences, with no model call (memory_writer)."""
        self.store = store
        self.chat_id = chat_id
        self.settings = settings
        self.complete = complete
        """(request, max_tokens) -> the model's answer, sent standalone."""

    async def attendance(self, head_id: int) -> Attendance:
        chat = await self.store.chats.get(self.chat_id)
        return await self.store.scenes.attendance(chat, head_id)

    async def own_summaries(self, head_id: int, anchor: int, attendance: Attendance, *, user: str,
                            names: Mapping[str, str]) -> int:
        """A summary of its own for each character present that cannot read the
        chat's and whose window of witnessed messages is due; returns how many were made.
        Raises what the request raises (the worker reports it). `attendance` is at `head_id`."""
        if not attendance.scene:
            return 0
        chat_summary = await self.store.memory.summary_at(head_id)
        made = 0
        for key in attendance.present():
            reader = Reader(key, attendance)
            summary = await readable_summary(self.store, head_id, reader, chat_summary)
            if summary is chat_summary:
                continue  # it reads the chat's (or there is none yet)
            stop = summary.covers_to_id if summary else None
            window = witnessed(await self.store.messages.path(head_id, limit=WINDOW_CAP, stop_before=stop), reader)
            chunk = split_for_compression(window, threshold=self.settings.summary_threshold,
                                          keep_recent=self.settings.recent_messages)[:OWN_CHUNK_CAP]
            if not chunk:
                continue
            name = names.get(key, key)
            compression = Compression.of(summary.content if summary else None, self.settings.summary_merge_chars)
            if self.own_words:
                text = own_words_summary(compression, chunk, self.settings, name=name, user=user, names=names)
            else:
                written = await self.complete(compression.request(name, user, chunk, names), compression.max_tokens(chunk))
                text = compression.text(compression.dated(validate_summary(compression.kept(written), name=name, user=user), chunk))
            await self.store.memory.add_summary(self.chat_id, anchor, content=text, covers_to_id=chunk[-1].id,
                                                diary_to_id=None, owner=key)
            made += 1
        return made

    async def own_memos(self, head_id: int, attendance: Attendance, *, reach: int, user: str,
                        names: Mapping[str, str]) -> list[MemoryEvent]:
        """A memo of its own for each character that witnessed part of a full
        batch near `head_id` (and has none for it): an event for each memo made,
        each kept from the story's words, and each that failed (stored as a gap).
        `attendance` is at `head_id`."""
        if not attendance.scene:
            return []
        path = await self.store.messages.path(head_id, limit=reach)
        have = {(m.anchor_id, m.owner) for m in await self.store.memos.on_path(head_id, cap=reach) if m.owner}
        out: list[MemoryEvent] = []
        for first, last in due_batches(path, self.settings.memo_batch, set()):
            batch = path[path.index(first): path.index(last) + 1]
            for key in attendance.everyone():
                if (last.id, key) in have or attendance.witnessed_all(key, first.depth, last.depth):
                    continue
                part = [m for m in batch if attendance.witnessed(key, m.depth)]
                if not _said(part):
                    continue
                name = names.get(key, key)
                highlights, reason = await write_memo(lambda request: self.complete(request, MEMO_MAX_TOKENS), part,
                                                      name=name, user=user, names=names, own_words=self.own_words)
                if not highlights:
                    await self.store.memos.add(self.chat_id, last.id, author=MemoAuthor.MODEL, first_id=first.id,
                                               reason=reason, owner=key)
                    out.append(MemoryWorkFailed("memo", f"no memo of {name}'s for messages #{first.id}–#{last.id}: {reason}"))
                    continue
                if reason:
                    out.append(fallback_notice(f"#{first.id}–#{last.id} ({name}'s)", reason))
                memo = await self.store.memos.add(self.chat_id, last.id, author=MemoAuthor.MODEL, first_id=first.id,
                                                  highlights=highlights, owner=key)
                if memo is not None:
                    out.append(MemoryWorkDone("memo", memo=memo))
        return out


def _said(messages: Sequence[Message]) -> bool:
    return any(m.role in (Role.USER, Role.ASSISTANT) and m.content.strip() for m in messages)
