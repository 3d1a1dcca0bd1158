"""One reply from a backend, stored as it arrives.

`ReplyStream` is a turn's generation half, for any speaker: it stores an empty
reply row at once (so a crash keeps the turn), streams the backend into it,
takes inline `<save_memory>` tags and imitated timestamps out of the visible
text, runs the model's tool rounds, saves the text a few times a second, and
on failure or cancellation keeps what arrived. The session decides what to
prompt with and what happens after.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator, Awaitable, Callable

from omoide.domain import DiaryEntry, Message, MessageStatus, Role
from omoide.errors import BackendError
from omoide.events import DiarySaved, ReplyDelta, ReplyFailed, ReplyFinished, ReplyStarted, TurnEvent
from omoide.llm.base import Backend, ChatMessage, Done, TextDelta, ToolCall, Usage
from omoide.memory.diary import SAVE_MEMORY, InlineMemoryFilter
from omoide.memory.window import strip_leading_stamp
from omoide.store import Store

PERSIST_INTERVAL = 0.25
"""Seconds between saves of a streaming reply, so a crash loses at most this much."""
MAX_TOOL_ROUNDS = 3
STAMP_HOLD = 16
"""Characters held back at the start of a reply to strip an imitated timestamp."""

SaveEntry = Callable[[int, str], Awaitable[DiaryEntry]]
"""Saves a diary entry the model wrote, at the reply's message id."""


class LeadingStampFilter:
    """Holds back the first few characters of a reply until it is clear whether
    the model imitated the `[MM/DD HH:MM]` prefix it sees on every message."""

    def __init__(self) -> None:
        self._held = ""
        self._checked = False

    def feed(self, text: str) -> str:
        if self._checked:
            return text
        self._held += text
        if len(self._held) < STAMP_HOLD:
            return ""
        visible, self._held, self._checked = strip_leading_stamp(self._held), "", True
        return visible

    def flush(self, rest: str = "") -> str:
        tail, self._held = self._held + rest, ""
        if not self._checked:
            self._checked = True
            return strip_leading_stamp(tail)
        return tail


class ReplyStream:
    def __init__(
        self,
        store: Store,
        backend: Backend,
        *,
        parent: Message,
        messages: list[ChatMessage],
        native_tools: bool,
        max_tokens: int,
        save_entry: SaveEntry,
    ) -> None:
        self.store = store
        self.backend = backend
        self.parent = parent
        self.messages = list(messages)
        self.native_tools = native_tools
        self.max_tokens = max_tokens
        self.save_entry = save_entry
        self.usage: Usage | None = None
        self._shown: list[str] = []
        self._tool_calls: list[dict[str, object]] = []
        self._inline = InlineMemoryFilter()
        self._stamp = LeadingStampFilter()
        self._last_persist = time.monotonic()

    @property
    def text(self) -> str:
        """The visible text so far."""
        return "".join(self._shown).strip()

    async def events(self) -> AsyncGenerator[TurnEvent, None]:
        reply = await self.store.messages.add(self.parent.chat_id, self.parent.id, Role.ASSISTANT, "", status=MessageStatus.STREAMING)
        yield ReplyStarted(reply)
        finished = False
        try:
            for _round in range(MAX_TOOL_ROUNDS):
                calls: list[ToolCall] = []
                async for event in self._round(reply, calls):
                    yield event
                if not calls:
                    break
            rest, entries = self._inline.flush()
            for entry_text in entries:
                yield DiarySaved(await self.save_entry(reply.id, entry_text))
            tail = self._stamp.flush(rest)
            if tail:
                self._shown.append(tail)
                yield ReplyDelta(tail)
            stored = await self.store.messages.update(
                reply.id, content=self.text, status=MessageStatus.COMPLETE, tool_calls=self._tool_calls or None
            )
            finished = True
            yield ReplyFinished(stored, self.usage)
        except BackendError as error:
            kept = await self._end_unfinished(reply, MessageStatus.INTERRUPTED if self.text else MessageStatus.FAILED)
            finished = True
            yield ReplyFailed(error, kept)
        finally:
            if not finished:
                # Cancelled (Esc, a restore, the app closing): keep what arrived.
                await asyncio.shield(self._end_unfinished(reply, MessageStatus.INTERRUPTED))

    async def _round(self, reply: Message, calls: list[ToolCall]) -> AsyncGenerator[TurnEvent, None]:
        """One request to the backend; the tool calls it made are added to `calls`."""
        round_text: list[str] = []
        tools = [SAVE_MEMORY] if self.native_tools else None
        async for event in self.backend.stream(self.messages, tools=tools, max_tokens=self.max_tokens):
            match event:
                case TextDelta(text=delta):
                    round_text.append(delta)
                    visible, entries = self._inline.feed(delta)
                    for entry_text in entries:
                        yield DiarySaved(await self.save_entry(reply.id, entry_text))
                    visible = self._stamp.feed(visible)
                    if visible:
                        self._shown.append(visible)
                        yield ReplyDelta(visible)
                case ToolCall() as call:
                    calls.append(call)
                    self._tool_calls.append({"id": call.id, "name": call.name, "arguments": call.arguments})
                    content = call.arguments.get("content") if call.name == SAVE_MEMORY.name else None
                    if isinstance(content, str) and content.strip():
                        yield DiarySaved(await self.save_entry(reply.id, content))
                case Usage() as reported:
                    self.usage = reported
                case Done():
                    pass
            await self._persist_now_and_then(reply)
        if calls:
            self._hand_back(calls, "".join(round_text))

    def _hand_back(self, calls: list[ToolCall], text: str) -> None:
        """The model called tools mid-reply: give it the results so it carries on."""
        self.messages.append({
            "role": "assistant",
            "content": text,
            "tool_calls": [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.raw_arguments or "{}"}}
                for c in calls
            ],
        })
        for call in calls:
            result = "Saved to your diary." if call.name == SAVE_MEMORY.name else f"Unknown tool {call.name}."
            self.messages.append({"role": "tool", "tool_call_id": call.id, "content": result})

    async def _persist_now_and_then(self, reply: Message) -> None:
        if time.monotonic() - self._last_persist > PERSIST_INTERVAL:
            self._last_persist = time.monotonic()
            await self.store.messages.update(reply.id, content="".join(self._shown))

    async def _end_unfinished(self, reply: Message, status: MessageStatus) -> Message | None:
        partial = self.text
        stored = await self.store.messages.update(reply.id, content=partial, status=status)
        if partial:
            return stored
        # Nothing arrived: the head goes back to the user's message, which stays.
        chat = await self.store.chats.get(reply.chat_id)
        if chat.head_id == reply.id:
            await self.store.chats.set_head(reply.chat_id, self.parent.id)
        return None
