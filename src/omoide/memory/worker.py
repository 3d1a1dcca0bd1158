"""Background memory work: memos, summary compression and diary compression
(which keeps entries of importance KEEP_VERBATIM and above word for word).

Runs after a reply is stored and never blocks one. On a backend that shares
this machine's cores with the replies (the embedded engine: `replies_first`),
each model call goes through the session's reply gate: a reply that starts
stops the call in flight, and the call is made again once the reply is
stored, from what the engine kept of it in memory work's own cache slot.

A failure changes nothing (the raw messages stay in the prompt), is reported,
and the work is tried again after a later turn, because the condition that
triggered it still holds.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from omoide.memory import templates
from omoide.characters.model import Character
from omoide.config.sections import MemorySettings
from omoide.domain.chat import DiaryAuthor, DiaryEntry, Memo, MemoryState, Message
from omoide.domain.witness import Attendance, Reader
from omoide.errors import OmoideError
from omoide.memory.events import MemoryEvent, MemoryNotice, MemoryWorkDone, MemoryWorkFailed, MemoryWorkStarted
from omoide.memory.spoiled import spoiled
from omoide.llm.base import Backend
from omoide.memory.diary import compressed_lines, diary_compression_request
from omoide.memory.calls import MemoryCalls, Runner
from omoide.memory.memo_work import MemoWork
from omoide.memory.own_words import own_words, own_words_diary, own_words_summary
from omoide.memory.rarity import story_rarity
from omoide.memory.scene_memory import SceneMemory, plan_diary
from omoide.memory.shared import ChatPrefix
from omoide.memory.summary import (
    SUMMARY_MAX_TOKENS, Compression, InvalidSummary, instructions_of, quoted, split_for_compression, validate_diary,
    validate_summary,
)
from omoide.store import Store

log = logging.getLogger(__name__)

MAX_PARTS_A_RUN = 10_000
"""A bound on the parts one run compresses (each advances the summary; the bound only guards the loop)."""



class MemoryWorker(MemoryCalls):
    def __init__(
        self,
        store: Store,
        chat_id: int,
        character: Character,
        settings: MemorySettings,
        backend: Backend,
        *,
        context_size: int,
        user_name: str,
        on_event: Callable[[MemoryEvent], None] | None = None,
        run: Runner | None = None,
        idle: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self.store = store
        self.chat_id = chat_id
        self.character = character
        self.settings = settings
        self.backend = backend
        self.context_size = context_size
        """The backend's context window: a request continuing the chat's prompt must fit it."""
        self.user_name = user_name
        self.speaker_names: dict[str, str] = {}
        """In a group scene: character id -> name, so summaries and memos say who spoke."""
        self.on_event = on_event
        self.run = run
        """The reply gate's runner, used where the backend says `replies_first`."""
        self.idle = idle
        """Until no reply streams: a long catch-up waits for it between parts, so a reply comes first."""
        self.status = ""
        self.failures = 0
        self._task: asyncio.Task[None] | None = None
        self._again: tuple[int, ChatPrefix | None] | None = None
        """The next head to work at, with the chat's prompt at that head."""
        self.prefix: ChatPrefix | None = None
        """The chat's prompt as the next turn begins it, when memory work shares the
        chat's backend: requests are sent as its continuation (memory/shared.py)."""
        self.own_words = own_words(settings, backend)
        """Summaries, memos and diary compressions keep the story's own words, with no model call."""
        self.memos = MemoWork(store, chat_id, settings, self._complete_at, self._emit, own_words=self.own_words)
        self.scene = SceneMemory(store, chat_id, settings, lambda messages, limit: self._complete(messages, limit, laid_out=True),
                                 own_words=self.own_words)

    def _emit(self, event: MemoryEvent) -> None:
        if isinstance(event, MemoryWorkDone | MemoryWorkFailed):
            for note in templates.take_notices():  # a broken template override, replaced by the default
                self._emit(MemoryNotice(note))
        match event:
            case MemoryWorkStarted(left=left) if left > 0:
                self.status = f"remembering… {left:,} earlier messages to go"
            case MemoryWorkStarted():
                self.status = "remembering…"
            case MemoryWorkDone():
                self.status = ""
            case MemoryWorkFailed(kind="memo", reason=reason):
                self.status = f"memo gap: {reason} — r in /memos retries"
            case MemoryWorkFailed(reason=reason):
                self.status = f"memory failed ({reason}); will retry"
        if self.on_event is not None:
            try:
                self.on_event(event)
            except Exception:  # a client's handler must not break memory work
                log.exception("memory event handler failed")

    def report(self, event: MemoryEvent) -> None:
        """Report other background memory work (the world keeper's) the same way."""
        self._emit(event)

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    def schedule(self, head_id: int, prefix: ChatPrefix | None = None) -> None:
        """Check, in the background, whether memory work is due at `head_id`;
        `prefix` is the chat's prompt at that head (None: requests stand alone).
        The two travel together: work at one head never continues the prompt of
        another (a swipe or an edit made meanwhile), so memory made on one path
        reads nothing of the other."""
        if self.running:
            self._again = (head_id, prefix)
            return
        self.prefix = prefix
        self._task = asyncio.get_running_loop().create_task(self._run(head_id))

    async def wait(self) -> None:
        while self._task is not None and not self._task.done():
            await asyncio.shield(self._task)

    async def cancel(self) -> None:
        if self._task is not None and not self._task.done():
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass

    async def _run(self, head_id: int) -> None:
        while True:
            try:
                await self.run_once(head_id)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - memory work must never crash the chat
                log.exception("memory work failed")
                self.failures += 1
                self._emit(MemoryWorkFailed("memory", _reason(exc)))
            if self._again is None:
                return
            (head_id, self.prefix), self._again = self._again, None

    async def run_once(self, head_id: int) -> None:
        """Make the memos due at `head_id` (memory_style 'memos' or 'both'), then
        compress the summary (styles 'summary', 'both') and the diary if due. In a
        group scene, also each character's own summary and memos where the chat's
        cover what it did not witness (memory/scene_memory.py)."""
        style = self.settings.style
        attendance = await self.scene.attendance(head_id)  # who was present where on the path: read once a run
        if style in ("memos", "both"):
            if await self.memos.make_due(head_id, name=self.character.display_name, user=self.user_name,
                                          names=self.speaker_names):
                self.failures += 1
            await self._own_memos(head_id, attendance)
        if style in ("summary", "both"):
            await self._catch_up_summary(head_id)
            await self._own_summaries(head_id, attendance)
        await self._compress_diary(head_id, attendance)

    async def _own_memos(self, head_id: int, attendance: Attendance) -> None:
        for event in await self.scene.own_memos(head_id, attendance, reach=self.memos.reach, user=self.user_name,
                                                names=self._names()):
            if isinstance(event, MemoryWorkFailed):
                self.failures += 1
            self._emit(event)

    async def _own_summaries(self, head_id: int, attendance: Attendance) -> None:
        try:
            if await self.scene.own_summaries(head_id, await self._anchor(head_id), attendance, user=self.user_name,
                                              names=self._names()):
                self._emit(MemoryWorkDone("summary"))
        except (OmoideError, InvalidSummary) as exc:
            self.failures += 1
            self._emit(MemoryWorkFailed("summary", _reason(exc)))

    def _names(self) -> dict[str, str]:
        return {self.character.id: self.character.display_name, **self.speaker_names}

    async def retry_memo(self, memo_id: int, at_id: int | None) -> Memo:
        """Try a gap in the memo book again (from the book or the CLI)."""
        memo = await self.store.memos.get(memo_id)
        return await self.memos.retry(memo, name=self.character.display_name, user=self.user_name, at_id=at_id,
                                         names=self.speaker_names)

    async def _anchor(self, start_head: int) -> int:
        """Where a result computed at `start_head` is recorded: the chat's head if
        the user carried on along the same path, otherwise `start_head` itself,
        so work begun on one branch never shows up in another."""
        chat = await self.store.chats.get(self.chat_id)
        if chat.head_id is not None and chat.head_id != start_head and await self.store.messages.is_ancestor(start_head, chat.head_id):
            return chat.head_id
        return start_head

    async def _catch_up_summary(self, head_id: int) -> None:
        """Compress part after part while one is due: after a reply, one part; after
        lines stored with no reply between them (an imported chat, a scenario's
        stored lines), as many as they make, each the size a reply's would be.
        Each part is read at the head the last one was recorded at."""
        for _ in range(MAX_PARTS_A_RUN):
            if not await self._compress_summary(head_id):
                return
            head_id = await self._anchor(head_id)
            if self.idle is not None:
                await self.idle()

    async def _compress_summary(self, head_id: int) -> bool:
        """One part of the summary, if one is due at `head_id`: whether one was recorded."""
        state = await self.store.memory.state(head_id)
        chunk = split_for_compression(
            state.window, threshold=self.settings.summary_threshold, keep_recent=self.settings.recent_messages
        )
        if not chunk:
            return False
        self._emit(MemoryWorkStarted("summary", left=len(state.window) - len(chunk) - self.settings.recent_messages))
        name = self.character.display_name
        compression = Compression.of(state.summary.content if state.summary else None,
                                     self.settings.merge_chars(self.context_size),
                                     self.settings.rewrite_tokens(self.context_size, SUMMARY_MAX_TOKENS))
        if self.own_words:
            rare = await story_rarity(self.store, [compression.summary, *(m.content for m in chunk)])
            await self._add_summary(head_id, chunk, own_words_summary(compression, chunk, self.settings, name=name,
                                                                        user=self.user_name, names=self.speaker_names,
                                                                        rare=rare, context_size=self.context_size))
            return True
        try:
            chunk, request = await self._chunk_that_continues(
                chunk, lambda part: compression.request(name, self.user_name, part, self.speaker_names))
            written = await self._complete(request, compression.max_tokens(chunk), laid_out=True)
            kept = validate_summary(compression.kept(written), name=name, user=self.user_name)
            lines = quoted(chunk, name, self.user_name, self.speaker_names)
            covered = [*lines, *compression.summary.splitlines()] if compression.rewrite else lines
            if why := spoiled(kept, instructions=instructions_of(request), lines=covered, user=self.user_name,
                              character=name):
                raise InvalidSummary(why)
            text = compression.text(compression.dated(kept, chunk))
        except (OmoideError, InvalidSummary) as exc:
            self.failures += 1
            if isinstance(exc, OmoideError) and self.failures < self.settings.fallback_after:
                self._emit(MemoryWorkFailed("summary", _reason(exc)))
                return False
            # The model wrote badly, or failed again and again: keep the story's own words instead
            # (of `chunk` as it was sent: cut down, when it was, to continue the chat's prompt).
            rare = await story_rarity(self.store, [compression.summary, *(m.content for m in chunk)])
            text = own_words_summary(compression, chunk, self.settings, name=name, user=self.user_name,
                                     names=self.speaker_names, rare=rare, context_size=self.context_size)
            self._emit(MemoryNotice(f"summary: {_reason(exc)}; kept the sentences with names, numbers and dates instead"))
        await self._add_summary(head_id, chunk, text)
        return True

    async def _add_summary(self, head_id: int, chunk: list[Message], text: str) -> None:
        _, diary_head = await self._diary_pointer(head_id)
        anchor = await self._anchor(head_id)
        summary = await self.store.memory.add_summary(
            self.chat_id, anchor, content=text, covers_to_id=chunk[-1].id, diary_to_id=diary_head
        )
        self.failures = 0
        self._emit(MemoryWorkDone("summary", summary=summary))

    async def _diary_pointer(self, head_id: int) -> tuple[MemoryState, int | None]:
        """The memory at `head_id` for its diary (its window is not read: one message) and its newest entry."""
        state = await self.store.memory.state(head_id, window_limit=1)
        entries = state.diary
        return state, entries[-1].id if entries else None

    async def _compress_diary(self, head_id: int, attendance: Attendance) -> None:
        """Compress the diary once it is due. In a group scene each character's
        view of the diary (its own entries, and those written for everyone while
        it was there) is compressed on its own, into a block only it reads; what
        is carried over keeps its readers (scene_memory.plan_diary)."""
        state, diary_head = await self._diary_pointer(head_id)
        settings = self.settings
        readers: list[str | None]
        if attendance.scene:
            depths = await self.store.messages.depths([e.message_id for e in state.diary])
            readers = [*sorted({*attendance.everyone(), *(e.owner for e in state.diary if e.owner)})]
            present: frozenset[str | None] = frozenset(attendance.present())

            def reads(reader: str | None, e: DiaryEntry) -> bool:
                return reader is not None and Reader(reader, attendance).reads(e.owner, depths.get(e.message_id, -1))
        else:
            readers, present = [None], frozenset([None])

            def reads(reader: str | None, e: DiaryEntry) -> bool:
                return True
        plans, carried = plan_diary(state.diary, readers, reads, present, prompt_lines=settings.diary_prompt_lines,
                                    compress_lines=settings.diary_compress_lines)
        if not plans:
            return
        self._emit(MemoryWorkStarted("diary"))
        texts: list[str] = []
        try:
            for plan in plans:
                name = self._names().get(plan.reader or "", self.character.display_name)
                most = compressed_lines(self.settings.diary_prompt_lines)
                if self.own_words:
                    texts.append(own_words_diary(plan.squeeze, most))
                    continue
                request = diary_compression_request(name, plan.squeeze, most)
                # Alone: the chat's prompt would show it messages newer than the entries it compresses.
                texts.append(validate_diary(await self._complete(request, laid_out=True)))
        except (OmoideError, InvalidSummary) as exc:
            self.failures += 1
            self._emit(MemoryWorkFailed("diary", _reason(exc)))
            return
        anchor = await self._anchor(head_id)
        _, head_now = await self._diary_pointer(anchor)
        if head_now != diary_head:
            # An entry was saved while we worked; compressing over it would hide it.
            self._emit(MemoryWorkFailed("diary", "the diary changed while it was being compressed"))
            return
        # Blocks first (one per compressed diary, and the old blocks carried over, at
        # one message: the chain walk takes them together), then the entries carried
        # over word for word, with their own dates, weights and owners.
        blocks = [(plan.reader, text) for plan, text in zip(plans, texts, strict=True)]
        blocks += [(owner, e.content) for e, owner in carried if e.compressed]
        entry = newest = None
        for owner, text in blocks:
            newest = await self.store.memory.add_diary_entry(self.chat_id, anchor, text, DiaryAuthor.COMPRESSION, owner=owner)
            entry = entry or newest
        for kept, owner in carried:
            if kept.compressed:
                continue
            newest = await self.store.memory.add_diary_entry(
                self.chat_id, anchor, kept.content, kept.author, importance=kept.importance, emotion=kept.emotion,
                origin_id=kept.memory_id, created_at=kept.created_at.isoformat(), owner=owner,
            )
        assert entry is not None and newest is not None
        current = state.summary
        await self.store.memory.add_summary(
            self.chat_id,
            anchor,
            content=current.content if current else "",
            covers_to_id=current.covers_to_id if current else None,
            diary_to_id=newest.id,
        )
        self.failures = 0
        self._emit(MemoryWorkDone("diary", entry=entry))


def _reason(exc: BaseException) -> str:
    if isinstance(exc, OmoideError):
        return exc.message
    return str(exc) or type(exc).__name__
