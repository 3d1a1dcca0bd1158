"""One reply from a backend, stored as it arrives.

`ReplyStream` is a turn's generation half, for any speaker: it stores an empty
reply row at once (so a crash keeps the turn), streams the backend into it,
takes inline `<save_memory>` and `<recall>` tags and imitated timestamps out
of the visible text, runs the model's tool rounds (native or inline: a recall
ends the round and the reply carries on after the result), saves the text a
few times a second, and on failure or cancellation keeps what arrived. The session decides what to
prompt with and what happens after.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

from omoide.domain.chat import Message, MessageStatus, Role
from omoide.errors import BackendError, HeadMoved, OmoideError, ReplyTooLong
from omoide.chat.events import MemoryRecalled, ReplyDelta, ReplyFailed, ReplyFinished, ReplyStarted, TurnEvent
from omoide.llm.base import CHARS_PER_TOKEN_BOUND, Backend, ChatMessage, Done, Event, TextDelta, ToolCall, Usage
from omoide.memory.diary import MAX_ENTRY_CHARS, SAVE_MEMORY, MemoryNote, cut_note
from omoide.memory.inline import InlineTagFilter
from omoide.memory.recall import RECALL, result_text
from omoide.llm.stamps import IMITATED_STAMP_CHARS, strip_leading_stamp
from omoide.store import Store

PERSIST_INTERVAL = 0.25
"""Seconds between saves of a streaming reply, so a crash loses at most this much."""
MAX_TOOL_ROUNDS = 3
STAMP_HOLD = IMITATED_STAMP_CHARS
"""At most this much of a reply that opens with "[" is held back, to strip an imitated timestamp."""

SaveNote = Callable[[int, MemoryNote], Awaitable[list[TurnEvent]]]
"""Saves what the model asked to remember, at the reply's message id; returns what happened."""
Recall = Callable[[str], Awaitable[list[str]]]
"""Searches the story for a recall query; returns the excerpt lines."""
RECALL_RESULT = "(What comes back to you, unseen by the user)\n{result}\nContinue your reply from where you stopped."
ARGUMENT = {SAVE_MEMORY.name: "content", RECALL.name: "query"}
"""The text argument each tool cannot do without."""

log = logging.getLogger(__name__)


def call_problem(call: ToolCall, *, recall: bool = False) -> str | None:
    """Why a tool call cannot be carried out, or None when it can."""
    if call.name not in (SAVE_MEMORY.name, *([RECALL.name] if recall else [])):
        return f"there is no tool named '{call.name}'"
    if not call.arguments and call.raw_arguments.strip():
        try:
            parsed = json.loads(call.raw_arguments)
        except json.JSONDecodeError as exc:
            return f"its arguments are not valid JSON ({exc.msg} at character {exc.pos})"
        if not isinstance(parsed, dict):
            return "its arguments are not a JSON object"
    text = call.arguments.get(ARGUMENT[call.name])
    if not isinstance(text, str) or not text.strip():
        return f"it has no '{ARGUMENT[call.name]}' text"
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
        head = self._held.lstrip()
        undecided = not head or (head.startswith("[") and "]" not in head)  # only a bracket opens a stamp
        if undecided and len(self._held) < STAMP_HOLD:
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
        save_note: SaveNote,
        recall: Recall | None = None,
        expected_head: int | None = None,
        finishing: set[asyncio.Future[Message | None]] | None = None,
        speaker: str | None = None,
    ) -> None:
        self.store = store
        self.speaker = speaker
        """The character (id) who speaks, stored on the reply in a group scene."""
        self.backend = backend
        self.parent = parent
        self.messages = list(messages)
        self.native_tools = native_tools
        self.max_tokens = max_tokens
        self.save_note = save_note
        self.recall = recall
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
        self._inline = InlineTagFilter(("save_memory", "recall"), stop=("recall",)) if recall else InlineTagFilter(("save_memory",))
        self._stamp = LeadingStampFilter()
        self._last_persist = time.monotonic()

    @property
    def text(self) -> str:
        """The visible text so far."""
        return "".join(self._shown).strip()

    async def events(self) -> AsyncGenerator[TurnEvent, None]:
        try:
            reply = await self.store.messages.add(self.parent.chat_id, self.parent.id, Role.ASSISTANT, "",
                                                  status=MessageStatus.STREAMING, expected_head=self.expected_head,
                                                  speaker=self.speaker)
        except HeadMoved:
            # Another window answered or wrote on after this message: the reply
            # goes beside it, off the path, and the session saves it as a branch.
            reply = await self.store.messages.add(self.parent.chat_id, self.parent.id, Role.ASSISTANT, "",
                                                  status=MessageStatus.STREAMING, move_head=False, speaker=self.speaker)
            self.forked = True
        yield ReplyStarted(reply)
        finished = False
        try:
            for _round in range(MAX_TOOL_ROUNDS):
                calls: list[ToolCall] = []
                async for event in self._round(reply, calls, last=_round == MAX_TOOL_ROUNDS - 1):
                    yield event
                if not calls:
                    break
            rest, tags = self._inline.flush()
            for tag in tags:
                if tag.name == SAVE_MEMORY.name:
                    for saved in await self.save_note(reply.id, MemoryNote.from_tag(tag)):
                        yield saved
            tail = self._stamp.flush(rest)
            if tail:
                self._shown.append(tail)
                yield ReplyDelta(tail)
            stored = await self.store.messages.update(
                reply.id, content=self.text, status=MessageStatus.COMPLETE, tool_calls=self._tool_calls or None
            )
            finished = True
            yield ReplyFinished(stored, self.usage)
        except Exception as fault:
            if isinstance(fault, OmoideError) and not isinstance(fault, BackendError):
                raise  # the store's own errors (disk full, another writer) have their own path
            failure = fault if isinstance(fault, BackendError) else _unexpected(fault)
            kept = await self._end_unfinished(reply, MessageStatus.INTERRUPTED if self.text else MessageStatus.FAILED,
                                              error=f"{failure.message} {failure.hint}".strip())
            finished = True
            yield ReplyFailed(failure, kept)
        finally:
            if not finished:
                # Cancelled (Esc, a restore, the app closing): keep what arrived.
                # Its own task, so a second cancellation (the app shutting down)
                # cannot stop the write; `finishing` lets the owner wait for it.
                ending = asyncio.ensure_future(self._end_unfinished(reply, MessageStatus.INTERRUPTED))
                self.finishing.add(ending)
                ending.add_done_callback(self.finishing.discard)
                await asyncio.shield(ending)

    async def _round(self, reply: Message, calls: list[ToolCall], *, last: bool) -> AsyncGenerator[TurnEvent, None]:
        """One request to the backend; the tool calls it made (native, or an inline
        recall, which ends the round) are added to `calls` and answered."""
        round_text: list[str] = []
        round_visible: list[str] = []
        tools = ([SAVE_MEMORY, RECALL] if self.recall else [SAVE_MEMORY]) if self.native_tools else None
        recall_query: str | None = None
        received = 0
        async with _closing(self.backend.stream(self.messages, tools=tools, max_tokens=self.max_tokens,
                                                        cache_key=self.speaker)) as stream:
            async for event in stream:
                match event:
                    case TextDelta(text=delta):
                        round_text.append(delta)
                        received += len(delta)
                        if received > self.max_tokens * CHARS_PER_TOKEN_BOUND:
                            raise self._too_long(received)
                        visible, tags = self._inline.feed(delta)
                        round_visible.append(visible)
                        for tag in tags:
                            if tag.name == SAVE_MEMORY.name:
                                for saved in await self.save_note(reply.id, MemoryNote.from_tag(tag)):
                                    yield saved
                            elif recall_query is None and not last:
                                recall_query = tag.text
                        visible = self._stamp.feed(visible)
                        if visible:
                            self._shown.append(visible)
                            yield ReplyDelta(visible)
                    case ToolCall() as call:
                        calls.append(call)
                        self._tool_calls.append({"id": call.id, "name": call.name, "arguments": call.arguments})
                        problem = call_problem(call, recall=self.recall is not None)
                        if problem is not None:
                            self._fail_call(call, problem)
                        elif call.name == SAVE_MEMORY.name:
                            note = MemoryNote.from_arguments(call.arguments)
                            for saved in await self.save_note(reply.id, note):
                                yield saved
                            self._results[call.id] = self._saved(note.content)
                    case Usage() as reported:
                        self.usage = reported
                    case Done():
                        pass
                await self._persist_now_and_then(reply)
                if recall_query is not None:
                    break  # the model asked to remember: answer before it invents the memory
        if recall_query is not None:
            call = ToolCall(id=f"inline_recall_{len(self._tool_calls)}", name=RECALL.name, arguments={"query": recall_query})
            self._tool_calls.append({"id": call.id, "name": call.name, "arguments": call.arguments, "inline": True})
            calls.append(call)
            lines = await self._recall(recall_query)
            yield MemoryRecalled(recall_query, lines)
            self.messages.append({"role": "assistant", "content": f"{''.join(round_visible)}<recall>{recall_query}</recall>"})
            self.messages.append({"role": "system", "content": RECALL_RESULT.format(result=result_text(lines))})
        elif calls:
            async for answered in self._hand_back(calls, "".join(round_text)):
                yield answered

    def _too_long(self, received: int) -> ReplyTooLong:
        log.warning("the server wrote %d characters against max_tokens %d; the reply is cut", received, self.max_tokens)
        return ReplyTooLong(
            f"The server kept writing past max_tokens ({self.max_tokens} tokens): the reply was cut after {received:,} characters.",
            "What arrived is kept. The server ignores max_tokens; set a limit on the server itself "
            "(llama.cpp: --n-predict) or ask for a shorter reply.",
        )

    def _saved(self, content: str) -> str:
        """The result of a save_memory call, saying so when the entry was cut."""
        length = len(content.strip())
        if length <= MAX_ENTRY_CHARS:
            return "Saved to your diary."
        self.problems.append(f"{SAVE_MEMORY.name}: {cut_note(length)}")
        return f"Saved to your diary, but cut: {cut_note(length)}"

    async def _recall(self, query: str) -> list[str]:
        return await self.recall(query) if self.recall is not None else []

    async def _hand_back(self, calls: list[ToolCall], text: str) -> AsyncGenerator[TurnEvent, None]:
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
            result = self._results.get(call.id)
            if result is None and call.name == RECALL.name:
                query = str(call.arguments.get("query", ""))
                lines = await self._recall(query)
                yield MemoryRecalled(query, lines)
                result = result_text(lines)
            self.messages.append({"role": "tool", "tool_call_id": call.id, "content": result or "Saved to your diary."})

    def _fail_call(self, call: ToolCall, problem: str) -> None:
        """Tell the model the call failed and why (it can try again), log it, and
        keep it for /prompt. Nothing is saved."""
        raw = call.raw_arguments if len(call.raw_arguments) <= 200 else call.raw_arguments[:200] + "…"
        log.warning("tool call %s failed: %s; arguments: %r", call.name, problem, raw)
        self.problems.append(f"{call.name or 'a tool call'} failed: {problem}")
        retry = (f'To remember, call {RECALL.name} again with arguments like {{"query": "..."}}.' if call.name == RECALL.name
                 else f'To save a diary entry, call {SAVE_MEMORY.name} again with arguments like {{"content": "..."}}.')
        self._results[call.id] = f"Error: the {call.name} call failed because {problem}. Nothing was saved. {retry}"

    async def _persist_now_and_then(self, reply: Message) -> None:
        if time.monotonic() - self._last_persist > PERSIST_INTERVAL:
            self._last_persist = time.monotonic()
            await self.store.messages.update(reply.id, content="".join(self._shown))

    async def _end_unfinished(self, reply: Message, status: MessageStatus, *, error: str | None = None) -> Message | None:
        partial = self.text
        stored = await self.store.messages.update(reply.id, content=partial, status=status, error=error)
        if partial:
            return stored
        # Nothing arrived: the head goes back to the user's message, which stays.
        chat = await self.store.chats.get(reply.chat_id)
        if chat.head_id == reply.id:
            await self.store.chats.set_head(reply.chat_id, self.parent.id)
        return None


def _unexpected(fault: Exception) -> BackendError:
    """A fault in a backend's own code, said and kept like a server's error
    instead of a reply that vanishes."""
    log.error("the reply failed unexpectedly", exc_info=fault)
    return BackendError(f"The reply failed unexpectedly ({type(fault).__name__}).",
                        "The log file has the details (omoide paths names it); /regen tries again.")


@asynccontextmanager
async def _closing(events: AsyncIterator[Event]) -> AsyncIterator[AsyncIterator[Event]]:
    """Close a backend's stream when a round ends early (an inline recall), so
    its connection or generation thread is released at once."""
    try:
        yield events
    finally:
        close = getattr(events, "aclose", None)
        if close is not None:
            await close()
