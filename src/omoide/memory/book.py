"""The memo book of one chat, for clients (the TUI's book screen, `omoide memos`),
and the memory state with memos for the prompt."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import replace

from omoide.config.sections import MemorySettings
from omoide.domain.chat import Memo, MemoAuthor, MemoryState
from omoide.domain.witness import Reader
from omoide.errors import CommandError, NotFound
from omoide.memory.boundary import memo_readable, readable_diary, readable_summary, witnessed
from omoide.memory.memos import clean_user_highlights, memos_cut, near_stretch, prompt_memos
from omoide.store import MemoHit, Store
from omoide.store.memory import WINDOW_CAP
from omoide.store.memos import PROMPT_WALK_CAP


async def memory_state(store: Store, settings: MemorySettings, head_id: int, reader: Reader | None = None) -> MemoryState:
    """The memory in force at `head_id` for the configured memory_style: in
    'memos' the raw window starts on a batch boundary and there is no summary
    text; in 'memos' and 'both' the memo layer and tail are filled; in 'none'
    the window is the last recent_messages and nothing else is made.

    With `reader` (a speaker in a group scene), only what that character may
    read (memory/boundary.py): the messages it witnessed, its summary, its
    diary and the memos of what it saw. Without, the chat's memory as you see it."""
    bounded = reader if reader is not None and reader.bounded else None
    style = settings.style
    if style == "none":
        # Unbounded, the window is the path's last recent_messages: only those are read.
        state = await store.memory.state(head_id, window_limit=settings.recent_messages if bounded is None else None)
        window = state.window if bounded is None else witnessed(state.window, bounded)
        state = replace(state, summary=None, window=window[-settings.recent_messages:])
        return await _own_diary(store, state, bounded)
    if style in ("summary", "both"):
        state = await store.memory.state(head_id)
        if bounded is not None:
            summary = await readable_summary(store, head_id, bounded, state.summary)
            if summary is not state.summary:
                stop = summary.covers_to_id if summary else None
                state = replace(state, summary=summary,
                                window=await store.messages.path(head_id, limit=WINDOW_CAP, stop_before=stop))
        if style == "summary":
            return await _own_diary(store, _witnessed(state, bounded), bounded)
        cut = state.window[0].depth if state.window else (await store.messages.get(head_id)).depth + 1
    else:
        head = await store.messages.get(head_id)
        cut = memos_cut(head.depth, keep=settings.memo_recent_messages, batch=settings.memo_batch)
        state = replace(await store.memory.state(head_id, window_from=cut), summary=None)
    # Most turns find their memos in the stretch the worker keeps filled; a longer
    # walk only when that stretch holds too few (gaps, hidden memos, an old chat).
    near = near_stretch(batch=settings.memo_batch, count=settings.memo_prompt_count,
                        step=settings.memo_roll_step, recent=settings.memo_recent_messages)
    for cap in (near, PROMPT_WALK_CAP):
        on_path = await store.memos.on_path(head_id, cap=cap)
        readable = [m for m in on_path if (memo_readable(m, bounded) if bounded is not None else m.owner is None)]
        stable, fresh = prompt_memos(
            readable, cut, count=settings.memo_prompt_count, step=settings.memo_roll_step, batch=settings.memo_batch
        )
        if len(stable) + settings.memo_roll_step > settings.memo_prompt_count or cap >= PROMPT_WALK_CAP:
            break
    state = replace(_witnessed(state, bounded), memos=stable, new_memos=fresh)
    return await _own_diary(store, state, bounded)


def _witnessed(state: MemoryState, reader: Reader | None) -> MemoryState:
    return state if reader is None else replace(state, window=witnessed(state.window, reader))


async def _own_diary(store: Store, state: MemoryState, reader: Reader | None) -> MemoryState:
    if reader is None:
        return state
    return replace(state, stable_diary=await readable_diary(store, state.stable_diary, reader),
                   new_diary=await readable_diary(store, state.new_diary, reader))


Retry = Callable[[int, int | None], Awaitable[Memo]]
"""Make a gap's memo again: (memo id, the head) -> the memo as it now stands."""


class MemoBook:
    """Reading and writing the memo book at a chat's head. Only retrying needs a
    model (`retry`, the session's memory worker); the rest is the store alone."""

    def __init__(self, store: Store, chat_id: int, retry: Retry | None = None) -> None:
        self.store = store
        self.chat_id = chat_id
        self._retry = retry

    async def _head(self) -> int:
        chat = await self.store.chats.get(self.chat_id)
        if chat.head_id is None:
            raise CommandError("The chat is empty.", "Send a message first.")
        return chat.head_id

    async def pages(self) -> list[Memo]:
        """Every memo on the path to the head, oldest first: hidden ones and gaps too."""
        chat = await self.store.chats.get(self.chat_id)
        return await self.store.memos.on_path(chat.head_id)

    async def search(self, text: str, *, limit: int = 100) -> list[MemoHit]:
        """The memos of this chat (every branch) whose highlights match `text`."""
        return await self.store.memos.search(text, chat_id=self.chat_id, limit=limit)

    async def recent_pages(self, messages: int) -> tuple[list[Memo], bool]:
        """The memos anchored in the last `messages` messages of the path, oldest
        first, and whether that was the whole path (a long book opens with these)."""
        chat = await self.store.chats.get(self.chat_id)
        return await self.store.memos.on_path(chat.head_id, cap=messages), chat.message_count <= messages

    async def _own(self, memo_id: int) -> Memo:
        memo = await self.store.memos.get(memo_id)
        if memo.chat_id != self.chat_id:
            raise NotFound(f"Memo #{memo_id} belongs to another chat.", "Pick a memo from this chat's book.")
        return memo

    async def write(self, text: str) -> Memo:
        """A memo you write at the head: the character knows it from the next turn."""
        highlights = clean_user_highlights(text)
        if not highlights:
            raise CommandError("The memo is empty.", "Write one highlight per line.")
        memo = await self.store.memos.add(self.chat_id, await self._head(), author=MemoAuthor.USER, highlights=highlights)
        assert memo is not None
        return memo

    async def edit(self, memo_id: int, text: str) -> Memo:
        """Replace a memo's highlights; the old version is kept."""
        await self._own(memo_id)
        highlights = clean_user_highlights(text)
        if not highlights:
            raise CommandError("A memo needs at least one highlight.", "To take it out of the prompt, hide it (d) instead.")
        return await self.store.memos.revise(memo_id, author=MemoAuthor.USER, at_id=await self._head(), highlights=highlights)

    async def set_hidden(self, memo_id: int, hidden: bool) -> Memo:
        await self._own(memo_id)
        return await self.store.memos.revise(memo_id, author=MemoAuthor.USER, at_id=await self._head(), hidden=hidden)

    async def retry(self, memo_id: int) -> Memo:
        """Make a gap's memo again with the summarizer backend."""
        memo = await self._own(memo_id)
        if not memo.gap:
            raise CommandError(f"Memo #{memo_id} is not a gap.", "Only a memo that failed to be made can be retried; edit it with e.")
        if self._retry is None:
            raise CommandError("Retrying a memo needs a model, and none was opened.", "Retry from the chat (r in /memos).")
        return await self._retry(memo_id, await self._head())

    async def retry_gaps(self) -> list[Memo]:
        """Retry every gap on the path; returns the memos as they now stand."""
        return [await self.retry(memo.id) for memo in await self.pages() if memo.gap]
