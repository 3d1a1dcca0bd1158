"""A turn's reply, for any speaker: gather what the speaker's prompt is
decided from, stream the reply into a row stored at once (`ReplyStream`), then
schedule the memory work that follows it.

Background world work steps aside (`ReplyGate`) until the reply is stored,
and so does memory work on the embedded engine; once that memory work has
changed what the next prompt begins with, the engine evaluates the new
beginning while the user reads and types (`warm`), so the next reply does
not wait for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping
from contextlib import aclosing
from datetime import datetime
from typing import Literal

from omoide.characters.attached import lorebooks_for
from omoide.characters.lore_engine import label
from omoide.characters.model import Character, Lorebook
from omoide.chat.chat_memory import ChatMemory
from omoide.chat.events import ChangedElsewhere, MemoryRecalled, PromptNotice, ReplyFailed, ReplyFinished, ReplyStarted, TurnEvent
from omoide.chat.reply import ReplyStream
from omoide.chat.scene import ChatScene
from omoide.chat.state import ChatState
from omoide.chat.story_words import StoryWords
from omoide.chat.tavern import Tavern, group_names
from omoide.chat.tokens import TokenCounter
from omoide.chat.toolform import ToolForm, resolve as resolve_tool_form
from omoide.chat.user import ChatUser
from omoide.config.settings import Settings
from omoide.domain.chat import Chat, MemoryState, Message, Role
from omoide.domain.witness import Reader
from omoide.llm.base import Backend, Usage
from omoide.memory.prompt.build import build_prompt
from omoide.memory.prompt.model import AssembledPrompt, PromptInputs, PromptOptions
from omoide.memory.shared import chat_prefix
from omoide.memory.timeline import with_timeline
from omoide.memory.worker import MemoryWorker
from omoide.scene.speakers import Choice
from omoide.world.gate import ReplyGate
from omoide.world.keeper import WorldKeeper
from omoide.world.profile import prompt_section

log = logging.getLogger(__name__)


class TurnRunner:
    def __init__(self, state: ChatState, settings: Settings, backend: Backend, *, character: Character,
                 scene: ChatScene, user: ChatUser, weights: ChatMemory, worker: MemoryWorker,
                 world: WorldKeeper, gate: ReplyGate, tavern: Tavern, lorebooks: list[Lorebook],
                 refresh: Callable[[], Awaitable[Chat]]) -> None:
        self.state = state
        self.store = state.store
        self.settings = settings
        self.backend = backend
        self.character = character
        self.scene = scene
        self.user = user
        self.weights = weights
        self.worker = worker
        self.world = world
        self.gate = gate
        self.tavern = tavern
        self.refresh = refresh
        """The session's: reads the chat row and who is present."""
        self.counter = TokenCounter(backend)
        self.tool_form: ToolForm | None = None
        """The diary tool's form with this backend, and why; found out on the first reply."""
        self.last_prompt: AssembledPrompt | None = None
        self.finishing: set[asyncio.Future[Message | None]] = set()
        """Replies cut off by a cancellation whose final write is still under way."""
        self._lore: dict[str, list[Lorebook]] = {character.id: lorebooks}
        self._previous_render: str | None = None
        self._previous_kept: int | None = None
        """The window messages the last prompt kept (where the next fit starts looking)."""
        self._reported_lore: set[tuple[str, str]] = set()
        """Lore skips (name, why) already logged, and told the user where it matters: once a session."""
        self._told: set[str] = set()
        """Prompt notices already said (a regex script skipped ...): once a session."""
        self._cut_told: set[tuple[str, ...]] = set()
        """The card fields whose cut was already said."""
        self._swept = False
        self.warming: asyncio.Task[None] | None = None
        """Evaluating the next prompt's beginning after memory work changed it (`warm`)."""
        self.warmed: Usage | None = None
        """The engine's counts for the last warm-up: what it evaluated, not the reply."""
        self.story = StoryWords(state, settings, scene, backend)
        """What the story's own words bring back each turn: corrections and passages."""

    def use_backend(self, backend: Backend) -> None:
        if self.worker.backend is self.backend:
            self.worker.backend = backend
        self.backend = backend
        self.story.backend = backend
        self.counter = TokenCounter(backend)
        self._previous_render = None

    @property
    def tools_mode(self) -> Literal["native", "inline"]:
        if not self.backend.supports_tools:
            return "inline"  # never offered, or refused by the server mid-chat
        if self.tool_form is not None:
            return self.tool_form.form
        return "inline" if self.settings.backend.tools == "inline" else "native"

    @property
    def summary_in_window(self) -> bool:
        """[memory] summary_placement: 'auto' places the summary's newer parts in
        the window on a backend that takes them there (`recaps_in_window`,
        memory/timeline.py): the memory state then carries its timeline, which
        the prompt follows."""
        placement = self.settings.memory.summary_placement
        return placement == "auto" and bool(getattr(self.backend, "recaps_in_window", False))

    # -- the prompt ----------------------------------------------------------------------

    async def gather(self, head_id: int, state: MemoryState, speaker: Character, reader: Reader | None = None) -> PromptInputs:
        """What `speaker`'s prompt at `head_id` is decided from (`build_prompt` decides):
        `state` is the memory it may read (ChatScene.speaker_memory) and `reader`
        its view in a scene, which also bounds what /recall brought back."""
        settings = self.settings
        if speaker.id not in self._lore:
            self._lore[speaker.id] = lorebooks_for(speaker)[0]
        now = self.state.clock()
        summary = state.summary.content if state.summary and "summary" not in self.state.chat.amnesia else ""
        world = await self.world.prompt_layers(speaker, self.scene.participants, state.window, summary)
        gossip, target = await self.scene.gossip_for(speaker, head_id)
        strengths, memo_strengths = await self.weights.strengths(head_id, state, now)
        lore = await self.tavern.gather(speaker=speaker, books=self._lore[speaker.id], state=state, head_id=head_id,
                                        user=self.state.user_name, group=group_names(self.state.chat, self.scene.present),
                                        now=now)
        return PromptInputs(
            character=speaker,
            state=state,
            options=PromptOptions(
                diary_lines=settings.memory.diary_prompt_lines, diary_selection=settings.memory.diary_selection,
                memo_layer=settings.memory.style in ("memos", "both"), recall_tool=settings.memory.recall_tool,
                context_size=settings.backend.context_size, max_tokens=settings.backend.max_tokens,
                lore_budget_percent=settings.memory.lore_budget_percent,
            ),
            user_name=self.state.user_name,
            user_persona=self.state.user_persona,
            tools=self.tools_mode,
            now=now,
            lorebooks=self._lore[speaker.id],
            lore=lore,
            profile=prompt_section(await self.weights.profile.for_prompt(self.state.chat_id, head_id)),
            pinned=[pin.content for pin in await self.store.pins.list(speaker.id)],
            corrections=await self.story.corrections(head_id),
            world=world["world"],
            world_notes=world["world_notes"],
            gossip=gossip,
            gossip_target=target,
            strengths=strengths,
            memo_strengths=memo_strengths,
            hidden=frozenset(self.state.chat.amnesia),
            recalled=await self.scene.witnessed_recall(self.user.pending_recall, reader),
            passages=await self.story.passages(head_id, state, speaker, reader, now, memory_tokens(state, world)),
            scene=self.scene.facts(speaker),
            previous=self._previous_render,
            kept_before=self._previous_kept,
        )

    async def build_prompt(self, head_id: int, *, state: MemoryState | None = None,
                           speaker: Character | None = None, reader: Reader | None = None) -> AssembledPrompt:
        """The prompt of `speaker` (default: the chat's character) at `head_id`,
        fitted to the context size, counted, and compared with the previous
        turn's to report the shared prefix. `state` (and `reader`), when given,
        are the speaker's own (ChatScene.speaker_memory)."""
        speaker = speaker or self.character
        if state is None:
            state, reader = await self.scene.speaker_memory(head_id, speaker)
        if self.summary_in_window:
            state = await with_timeline(self.store, state)
        inputs = await self.gather(head_id, state, speaker, reader)
        self.counter.reset()
        prompt = await build_prompt(inputs, self.counter.count)
        prompt.exact, prompt.count_method = self.counter.exact, self.counter.method
        if prompt.card_cut and (cut := self._card_cut_notice(speaker, prompt)):
            prompt.notices.append(cut)
        # said once per chat session, not at every turn
        prompt.notices = [note for note in prompt.notices if note not in self._told]
        for note in prompt.notices:
            log.warning("%s", note)
        self._told.update(prompt.notices)
        for skip in prompt.skipped_lore:  # a broken key or the budget: once per entry and reason, not every turn
            key = (label(skip.entry), skip.reason)
            if skip.kind == "chance" or key in self._reported_lore:
                continue
            self._reported_lore.add(key)
            log.warning("lore entry '%s' skipped: %s", *key)
            if skip.kind == "budget" and skip.entry.constant:  # the user hears of it, not only the log
                prompt.notices.append(f"Lore left out: '{key[0]}' is {skip.reason}. "
                                      "Raise [memory] lore_budget_percent or [backend] context_size to keep it.")
        if inputs.lore is not None:
            self.tavern.expect(prompt, inputs.lore.chat_length)
        self._previous_render = prompt.rendered()
        self._previous_kept = next((layer.messages for layer in prompt.layers if layer.name == "window"), None)
        self.last_prompt = prompt
        return prompt

    def _card_cut_notice(self, speaker: Character, prompt: AssembledPrompt) -> str | None:
        """What the fit left out of the card: once per chat session and set of
        fields (the token figures move a little from turn to turn)."""
        fields = tuple(cut.field for cut in prompt.card_cut)
        if fields in self._cut_told:
            return None
        self._cut_told.add(fields)
        return (f"{speaker.display_name}'s card does not fit the context ({prompt.budget or 0:,} tokens for the prompt); "
                f"left out: {'; '.join(cut.phrase() for cut in prompt.card_cut)}"
                + (f"; and the {prompt.window_cut} oldest message(s) of the chat"
                   + (", the greeting among them" if prompt.greeting_cut else "") if prompt.window_cut else "")
                + ". Raise [backend] context_size, or shorten the card.")

    # -- the reply -------------------------------------------------------------------------

    async def reply(self, parent: Message, head_id: int, *, moves_head: bool = False,
                    choice: Choice | None = None) -> AsyncGenerator[TurnEvent, None]:
        """Answer `parent`; `head_id` is the chat's head as this turn left it (the
        reply becomes the head only if nobody else moved it since)."""
        async with self.gate.reply():  # background world work steps aside until the reply is stored
            async with aclosing(self._answer(parent, head_id, moves_head, choice)) as events:
                async for event in events:
                    yield event

    async def _answer(self, parent: Message, head_id: int, moves_head: bool, choice: Choice | None) -> AsyncGenerator[TurnEvent, None]:
        if self.tool_form is None:
            self.tool_form = await resolve_tool_form(self.settings, self.backend)
        speaker = self.scene.cast.character(choice.key) if choice else self.character
        state, reader = await self.scene.speaker_memory(parent.id, speaker)
        names = (speaker.display_name, self.state.user_name)
        if parent.role is Role.USER:
            await self.weights.note_mentions(parent, state, names)
        prompt = await self.build_prompt(parent.id, state=state, speaker=speaker, reader=reader)
        prompt.speaker = f"{speaker.display_name}: {choice.reason}" if choice else ""
        for note in prompt.notices:
            yield PromptNotice(note)
        speakers = self.scene.names() if reader is not None else None

        async def recall_tool(query: str) -> list[str]:
            return [r.line() for r in await self.user.recall_at(parent.id, query, state, reader=reader, speakers=speakers)]

        stream = ReplyStream(
            self.store, self.backend, parent=parent, messages=prompt.messages, expected_head=head_id, finishing=self.finishing,
            native_tools=self.tools_mode == "native", max_tokens=self.settings.backend.max_tokens,
            save_note=self.weights.save_note, recall=recall_tool if self.settings.memory.recall_tool else None,
            speaker=speaker.id if self.scene.is_scene else None,
        )
        ours = {head_id, parent.id}
        try:
            async with aclosing(stream.events()) as events:
                async for event in events:
                    if isinstance(event, ReplyStarted):
                        ours.add(event.message.id)
                        await self.tavern.commit(event.message)  # lore timers count from this reply
                    if isinstance(event, ReplyStarted | ReplyFailed):
                        await self.refresh()
                        if moves_head and isinstance(event, ReplyStarted):
                            await self.world.follow_head(self.state.chat_id)
                    elif isinstance(event, MemoryRecalled):
                        prompt.recalled += [f"(recall: {event.query}) {line}" for line in event.lines] or [f"(recall: {event.query}) nothing"]
                    elif isinstance(event, ReplyFinished):
                        await self._finished(event, prompt, stream, state, names)
                    yield event
                    if isinstance(event, ReplyStarted) and stream.forked:
                        yield await self._fork(event.message)
        finally:
            with contextlib.suppress(Exception):  # bookkeeping only; the store may be closing
                head = await asyncio.shield(self.state.stored_head())
                if head in ours:  # else another window moved it: the client has yet to see that
                    self.state.own_head = head

    async def _finished(self, event: ReplyFinished, prompt: AssembledPrompt, stream: ReplyStream, state: MemoryState,
                        names: tuple[str, str]) -> None:
        """The reply is stored: note what it brought up again and start the memory work."""
        prompt.usage = event.usage
        prompt.tool_problems = list(stream.problems)
        self.user.pending_recall = []
        await self.weights.note_mentions(event.message, state, names)
        # Memory work on the chat's backend extends the chat's prompt; in a scene that
        # prompt is one speaker's knowledge, which the chat's memory must not draw on.
        prefix = None if self.scene.is_scene else chat_prefix(prompt, event.message)
        self.worker.schedule(event.message.id, prefix if self.worker.backend is self.backend else None)
        self.world.prefix = (self.state.chat_id, prefix) if prefix and self.world.backend is self.backend else None
        if not self.scene.is_scene and getattr(self.backend, "replies_first", False):
            self.warming = asyncio.get_running_loop().create_task(self.warm(event.message.id, state))
        if not self._swept or self.world.needs_retry:
            self._swept = True
            self.world.schedule_sweep()

    async def warm(self, head_id: int, before: MemoryState) -> None:
        """After the memory work that follows the reply at `head_id`, if it changed
        what comes before the window (`before` is the memory the reply was
        written with), have the engine evaluate the next prompt up to that reply
        on the chat's cache slot, while the user reads and types. Skipped when
        the chat moved on meanwhile; a reply that starts stops it. On the
        embedded engine only: it costs a remote server's time, not ours."""
        await self.worker.wait()
        if await self.state.stored_head() != head_id:
            return
        try:
            await self.gate.unless_replying(lambda: self._warm(head_id, before))
        except Exception:  # noqa: BLE001 - a cache warm-up must never break the chat
            log.warning("evaluating the next prompt ahead failed", exc_info=True)

    async def _warm(self, head_id: int, before: MemoryState) -> None:
        state, reader = await self.scene.speaker_memory(head_id, self.character)
        if _before_window(state) == _before_window(before):
            return  # the cache still holds the next prompt's beginning
        if self.summary_in_window:
            state = await with_timeline(self.store, state)
        draws = self.tavern.rng.getstate()  # the real turn's macros draw what they would have drawn
        try:
            inputs = await self.gather(head_id, state, self.character, reader)
            prompt = await build_prompt(inputs, self.counter.count)
        finally:
            self.tavern.rng.setstate(draws)
        messages = list(prompt.messages)
        if len(messages) > 1 and messages[-1]["role"] == "system":
            messages.pop()  # the volatile tail: the next turn has its own
        events = self.backend.stream(messages, max_tokens=1)
        try:
            async for event in events:
                if isinstance(event, Usage):
                    self.warmed = event
        finally:
            close = getattr(events, "aclose", None)  # stopped by a reply: stop the engine too
            if close is not None:
                await close()

    async def _fork(self, reply: Message) -> ChangedElsewhere:
        """Another window wrote on after your message: keep this reply on a branch."""
        name = f"fork-{datetime.now():%Y%m%d-%H%M%S}-{reply.id}"
        await self.store.branches.save(self.state.chat_id, name, reply.id)
        return ChangedElsewhere(
            f"Another window wrote in this chat while you did; this reply is kept on the branch '{name}' "
            f"(/branch restore {name} goes there).",
            forked=True,
        )


def memory_tokens(state: MemoryState, world: Mapping[str, object]) -> int:
    """About how many tokens the memory layers other than the passages take (4 characters a token)."""
    notes = world.get("world_notes")
    said = [state.summary.content if state.summary else "", *(e.content for e in state.diary),
            *(" ".join(m.highlights) for m in state.memos), str(world.get("world") or ""),
            *(str(note) for note in (notes if isinstance(notes, list) else []) if note)]
    return sum(len(text) for text in said) // 4


def _before_window(state: MemoryState) -> tuple[int | None, tuple[int, ...], tuple[int, ...]]:
    """What memory work changes at the start of a prompt: the summary (a new
    part or a rewrite; a diary compression adds a row too), the diary folded
    in, the memos."""
    return (state.summary.id if state.summary else None, tuple(e.id for e in state.stable_diary),
            tuple(m.id for m in state.memos))
