"""Making memos, in the background (called by the MemoryWorker after a reply is
stored) or on request (retrying a gap from the book or the CLI).

A memo is anchored to the last message of its batch, wherever the user has
moved on to since: it is in force on every path through that message, and on
no other. A failure is stored as a gap (a memo whose version says why), so the
book shows it and the worker does not try the same batch at every turn; a retry
adds a version to the same memo.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence

from omoide.config.sections import MemorySettings
from omoide.domain.chat import Memo, MemoAuthor, Message
from omoide.errors import OmoideError
from omoide.memory.extract import nothing_telling
from omoide.memory.events import MemoryEvent, MemoryNotice, MemoryWorkDone, MemoryWorkFailed, MemoryWorkStarted
from omoide.llm.base import ChatMessage
from omoide.memory.memos import batch_ends_due, due_batches, fallback_highlights, memo_lines, memo_task, near_stretch, read_memo
from omoide.memory.summary import InvalidSummary
from omoide.store import Store

Complete = Callable[[list[ChatMessage], int, int], Awaitable[str]]
"""(request, max_tokens, the memo's anchor) -> the model's answer."""
MEMO_MAX_TOKENS = 240
"""Three one-sentence highlights need far less; a model that rambles is cut off."""


async def write_memo(complete: Callable[[list[ChatMessage]], Awaitable[str]], batch: Sequence[Message], *,
                     name: str, user: str, names: Mapping[str, str] | None,
                     own_words: bool = False) -> tuple[list[str], str | None]:
    """A memo's highlights for `batch`, and why the model's were not used (None
    when they were, or when `own_words` asks for no model at all). A backend that
    fails gives no highlights (the batch becomes a gap to retry); a reply that is
    no memo, or a spoiled one, gives the batch's own sentences with names,
    numbers and dates instead (none: a gap)."""
    lines = memo_lines(name, user, batch, names=names)
    if own_words:
        return fallback_highlights(lines, name=name, user=user) or [nothing_telling(user, name)], None
    request = memo_task(name, user, lines)
    try:
        return read_memo(await complete(request), request, lines, name=name, user=user), None
    except OmoideError as exc:
        return [], exc.message
    except InvalidSummary as exc:
        return fallback_highlights(lines, name=name, user=user), str(exc)


def fallback_notice(span: str, reason: str) -> MemoryNotice:
    return MemoryNotice(f"memo for messages {span}: {reason}; kept the sentences with names, numbers and dates instead")


class MemoWork:
    def __init__(self, store: Store, chat_id: int, settings: MemorySettings, complete: Complete, emit: Callable[[MemoryEvent], None],
                 *, own_words: bool = False) -> None:
        self.own_words = own_words
        """Memos keep the batch's own sentences, with no model call (memory_writer)."""
        self.store = store
        self.chat_id = chat_id
        self.settings = settings
        self.complete = complete
        self.emit = emit

    @property
    def reach(self) -> int:
        """How far above the head the worker looks for batches without a memo:
        the stretch whose memos can reach the prompt, and a little more."""
        s = self.settings
        return near_stretch(batch=s.memo_batch, count=s.memo_prompt_count, step=s.memo_roll_step, recent=s.memo_recent_messages)

    async def make_due(self, head_id: int, *, name: str, user: str, names: Mapping[str, str] | None = None) -> int:
        """Make a memo for each full batch near `head_id` that has none; returns
        how many failed (each one is now a gap in the book)."""
        made = [m for m in await self.store.memos.on_path(head_id, cap=self.reach) if m.first_id is not None]
        head = await self.store.messages.get(head_id)
        if not batch_ends_due(head.depth, self.reach, self.settings.memo_batch, {m.anchor_depth for m in made}):
            return 0  # most turns: the stretch's messages need not be read
        path = await self.store.messages.path(head_id, limit=self.reach)
        covered = {m.anchor_id for m in made}
        failed = 0
        for first, last in due_batches(path, self.settings.memo_batch, covered):
            self.emit(MemoryWorkStarted("memo"))
            batch = path[path.index(first) : path.index(last) + 1]
            highlights, reason = await write_memo(lambda request: self.complete(request, MEMO_MAX_TOKENS, last.id), batch,
                                                  name=name, user=user, names=names, own_words=self.own_words)
            if not highlights:
                await self.store.memos.add(self.chat_id, last.id, author=MemoAuthor.MODEL, first_id=first.id, reason=reason)
                failed += 1
                self.emit(MemoryWorkFailed("memo", f"no memo for messages #{first.id}–#{last.id}: {reason}"))
                continue
            if reason:
                self.emit(fallback_notice(f"#{first.id}–#{last.id}", reason))
            memo = await self.store.memos.add(self.chat_id, last.id, author=MemoAuthor.MODEL, first_id=first.id, highlights=highlights)
            self.emit(MemoryWorkDone("memo", memo=memo))
        return failed

    async def retry(self, memo: Memo, *, name: str, user: str, at_id: int | None,
                    names: Mapping[str, str] | None = None) -> Memo:
        """Make a gap's memo again: a new version, with highlights or with the new reason."""
        if memo.first_id is None:
            return memo
        first = await self.store.messages.get(memo.first_id)
        batch = await self.store.messages.path_slice(memo.anchor_id, first.depth, memo.anchor_depth - first.depth + 1)
        self.emit(MemoryWorkStarted("memo"))
        highlights, reason = await write_memo(lambda request: self.complete(request, MEMO_MAX_TOKENS, memo.anchor_id), batch,
                                              name=name, user=user, names=names, own_words=self.own_words)
        if not highlights:
            revised = await self.store.memos.revise(memo.id, author=MemoAuthor.MODEL, at_id=at_id, reason=reason)
            self.emit(MemoryWorkFailed("memo", f"no memo for messages {memo.span}: {reason}"))
            return revised
        if reason:
            self.emit(fallback_notice(memo.span, reason))
        revised = await self.store.memos.revise(memo.id, author=MemoAuthor.MODEL, at_id=at_id, highlights=highlights)
        self.emit(MemoryWorkDone("memo", memo=revised))
        return revised
