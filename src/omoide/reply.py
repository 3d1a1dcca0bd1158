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
import json
import logging
import time
from collections.abc import AsyncGenerator, Awaitable, Callable

from omoide.domain import DiaryEntry, Message, MessageStatus, Role
from omoide.errors import BackendError, HeadMoved
from omoide.events import DiarySaved, ReplyDelta, ReplyFailed, ReplyFinished, ReplyStarted, TurnEvent
from omoide.llm.base import Backend, ChatMessage, Done, TextDelta, ToolCall, Usage
from omoide.memory.diary import MAX_ENTRY_CHARS, SAVE_MEMORY, InlineMemoryFilter, cut_note
from omoide.memory.window import strip_leading_stamp
from omoide.store import Store

PERSIST_INTERVAL = 0.25
"""Seconds between saves of a streaming reply, so a crash loses at most this much."""
MAX_TOOL_ROUNDS = 3
STAMP_HOLD = 16
"""Characters held back at the start of a reply to strip an imitated timestamp."""

SaveEntry = Callable[[int, str], Awaitable[DiaryEntry]]
"""Saves a diary entry the model wrote, at the reply's message id."""

log = logging.getLogger(__name__)


def call_problem(call: ToolCall) -> str | None:
    """Why a save_memory call cannot be carried out, or None when it can."""
    if call.name != SAVE_MEMORY.name:
        return f"there is no tool named '{call.name}'"
    if not call.arguments and call.raw_arguments.strip():
        try:
            parsed = json.loads(call.raw_arguments)
        except json.JSONDecodeError as exc:
            return f"its arguments are not valid JSON ({exc.msg} at character {exc.pos})"
        if not isinstance(parsed, dict):
            return "its arguments are not a JSON object"
    content = call.arguments.get("content")
    if not isinstance(content, str) or not content.strip():
        return "it has no 'content' text"
    return None


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
        expected_head: int | None = None,
        finishing: set[asyncio.Future[Message | None]] | None = None,
    ) -> None:
        self.store = store
        self.backend = backend
        self.parent = parent
        self.messages = list(messages)
        self.native_tools = native_tools
        self.max_tokens = max_tokens
        self.save_entry = save_entry
        self.expected_head = parent.id if expected_head is None else expected_head
        self.usage: Usage | None = None
        self.forked = False
        self.finishing: set[asyncio.Future[Message | None]] = finishing if finishing is not None else set()
        """True when the reply could not become the head (another window wrote first)."""
        self._shown: list[str] = []
        self._tool_calls: list[dict[str, object]] = []
        self._results: dict[str, str] = {}
        self.problems: list[str] = []
        """Tool calls that failed or were cut, said plainly (for /prompt and the user)."""
        self._inline = InlineMemoryFilter()
        self._stamp = LeadingStampFilter()
        self._last_persist = time.monotonic()

    @property
    def text(self) -> str:
        """The visible text so far."""
        return "".join(self._shown).strip()

    async def events(self) -> AsyncGenerator[TurnEvent, None]:
        try:
            reply = await self.store.messages.add(self.parent.chat_id, self.parent.id, Role.ASSISTANT, "",
                                                  status=MessageStatus.STREAMING, expected_head=self.expected_head)
        except HeadMoved:
            # Another window answered or wrote on after this message: the reply
            # goes beside it, off the path, and the session saves it as a branch.
            reply = await self.store.messages.add(self.parent.chat_id, self.parent.id, Role.ASSISTANT, "",
                                                  status=MessageStatus.STREAMING, move_head=False)
            self.forked = True
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
                # Its own task, so a second cancellation (the app shutting down)
                # cannot stop the write; `finishing` lets the owner wait for it.
                ending = asyncio.ensure_future(self._end_unfinished(reply, MessageStatus.INTERRUPTED))
                self.finishing.add(ending)
                ending.add_done_callback(self.finishing.discard)
                await asyncio.shield(ending)

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
                    problem = call_problem(call)
                    if problem is not None:
                        self._fail_call(call, problem)
                        continue
                    content = str(call.arguments["content"])
                    entry = await self.save_entry(reply.id, content)
                    result = "Saved to your diary."
                    if len(content.strip()) > MAX_ENTRY_CHARS:
                        result = f"Saved to your diary, but cut: {cut_note(len(content.strip()))}"
                        self.problems.append(f"{SAVE_MEMORY.name}: {cut_note(len(content.strip()))}")
                    self._results[call.id] = result
                    yield DiarySaved(entry)
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
            result = self._results.get(call.id, "Saved to your diary.")
            self.messages.append({"role": "tool", "tool_call_id": call.id, "content": result})

    def _fail_call(self, call: ToolCall, problem: str) -> None:
        """Tell the model the call failed and why (it can try again), log it, and
        keep it for /prompt. Nothing is saved."""
        raw = call.raw_arguments if len(call.raw_arguments) <= 200 else call.raw_arguments[:200] + "…"
        log.warning("tool call %s failed: %s; arguments: %r", call.name, problem, raw)
        self.problems.append(f"{call.name or 'a tool call'} failed: {problem}")
        self._results[call.id] = (
            f"Error: the {call.name} call failed because {problem}. Nothing was saved. "
            f'To save a diary entry, call {SAVE_MEMORY.name} again with arguments like {{"content": "..."}}.'
        )

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
