"""The end-of-conversation pass, for any number of participants.

For every participant who is not the user, from that character's point of view:

1. a perspective summary, appended to its rolling list of summaries;
2. toward each other participant: the summary appended to the pair's rolling
   list, the consolidated memory rewritten, a next-conversation goal, the
   1-3 word descriptor, and familiarity bumped (its other pairs decay);
3. for each absent character named in the conversation: what it learned
   second-hand, folded into its memory, descriptor and (maybe) goal for them;
4. its global memory, rewritten from its recent conversations with everyone.

Each LLM step is logged with before and after, template and model. A step
that fails keeps the previous value, is logged as failed, and the pass goes
on with the steps that do not depend on it; the conversation is then
'incomplete' and the keeper runs the pass again later, skipping the steps
already applied. A pass stops early when the conversation is taken out of
force by a branch restore (it resumes if the end comes back).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field

from omoide.domain.chat import Message
from omoide.config.sections import WorldSettings
from omoide.errors import OmoideError
from omoide.llm.base import Backend, TextDelta
from omoide.llm.slots import MEMORY_CACHE_KEY
from omoide.llm.stamps import split_stamp, stamp
from omoide.store import Store
from omoide.memory.rarity import story_rarity
from omoide.world import extractive, familiarity, steps
from omoide.world.transcript import render_transcript
from omoide.domain.world import SELF, Conversation, Field, Item, Mention, Participant, UpdateKind, dump_items, load_items

log = logging.getLogger(__name__)



@dataclass(slots=True)
class PassResult:
    applied: int = 0
    failed: list[str] = field(default_factory=list)
    stopped: bool = False
    """The conversation was taken out of force (a branch restore) before the pass ended."""


Runner = Callable[[Callable[[], Awaitable[str]]], Awaitable[str]]


async def _direct(call: Callable[[], Awaitable[str]]) -> str:
    return await call()


def _items(items: list[Item]) -> str:
    return "\n".join(f"- {i.text}" for i in items) or steps.NONE_YET


class ConversationPass:
    """One run of the pass over one conversation. `lock` serialises its writes
    with the keeper's retracts, so a restore never races a step's write."""

    def __init__(
        self, store: Store, backend: Backend, conversation: Conversation, messages: Sequence[Message],
        *, descriptions: dict[str, str], speaker: Callable[[Message], str], settings: WorldSettings,
        run: Runner = _direct, lock: asyncio.Lock | None = None, witnessed: Mapping[str, Sequence[Message]] | None = None,
        own_words: bool = False,
    ) -> None:
        self.own_words = own_words
        """Each step keeps the story's own words, with no model call (world/extractive.py)."""
        self.user = next((p.name for p in conversation.participants if p.is_user), "")
        self.store = store
        self.backend = backend
        self.conv = conversation
        self.descriptions = descriptions
        self.settings = settings
        self.run_call = run
        self.lock = lock or asyncio.Lock()
        self.messages = messages
        self.speaker = speaker
        self.when = stamp(messages[-1].created_at) if messages else ""
        """When the conversation ended: the summaries it adds open with it, so a
        character can tell how long ago a conversation was."""
        self.witnessed = witnessed or {}
        """In a scene: what each character witnessed of the conversation, the only
        part of it its steps read (it learns nothing said while it was away)."""
        self.transcripts: dict[str, str] = {}
        self.model = "the story's own words" if own_words else f"{getattr(backend, 'name', '?')} · {getattr(backend, 'model', None) or 'default'}"
        self.result = PassResult()
        self.done: set[tuple[str, str, str]] = set()

    async def run(self) -> PassResult:
        self.done = await self.store.world.done_steps(self.conv.id)
        try:
            for me in self.conv.characters:
                await self._for(me)
        except _Stopped:
            self.result.stopped = True
        return self.result

    # -- one participant ----------------------------------------------------------------

    def transcript_for(self, me: Participant) -> str:
        """What `me`'s steps read: the conversation it witnessed (world/transcript.py)."""
        if me.key not in self.transcripts:
            self.transcripts[me.key] = render_transcript(
                self.witnessed.get(me.key, self.messages), self.speaker, self.settings.transcript_chars,
                user=self.user, character=me.name, dated=self.own_words)
        return self.transcripts[me.key]

    async def _for(self, me: Participant) -> None:
        if not self.transcript_for(me):
            return  # it witnessed nothing said: nothing to remember
        others = [p for p in self.conv.participants if p.key != me.key]
        names = ", ".join(p.name for p in others) or "no one"
        summary = await self._summary(me, names)
        if summary is None:
            self.result.failed.append(f"{me.name}: everything (the summary failed)")
            return
        for other in others:
            await self._toward(me, other, summary)
        await self._decay(me)
        for mention in self.conv.mentions:
            if mention.key != me.key and mention.key not in {p.key for p in others}:
                await self._offscreen(me, mention)
        await self._global(me)

    async def _summary(self, me: Participant, others: str) -> str | None:
        if (me.key, SELF, "summary") in self.done:
            return await self._summary_text(me)
        text = await self._llm(me, SELF, "summary", Field.SUMMARIES, {
            "char": me.name, "char_description": self.descriptions.get(me.key, ""), "others": others,
            "transcript": self.transcript_for(me),
        }, lambda out: self._append(me.key, SELF, Field.SUMMARIES, self._dated(out)))
        return text

    async def _summary_text(self, me: Participant) -> str | None:
        for update in await self.store.world.updates(conversation_id=self.conv.id, owner=me.key):
            if update.step == "summary" and update.kind is UpdateKind.LLM:
                item = next((i for i in load_items(update.after) if i.conversation_id == self.conv.id), None)
                return item.text if item else None
        return None

    async def _toward(self, me: Participant, other: Participant, summary: str) -> None:
        about = other.key
        if (me.key, about, "pair_summary") not in self.done:
            await self._rule(me, about, "pair_summary", Field.PAIR_SUMMARIES, lambda cur: self._appended(cur, self._dated(summary)))
        view = (await self.store.world.view(me.key)).about(about)
        memory = await self._llm(me, about, "memory", Field.MEMORY, {
            "char": me.name, "other": other.name, "previous_memory": view.memory or steps.NONE_YET,
            "summaries": _items(view.pair_summaries), "offscreen": _items(view.offscreen),
        })
        memory = memory or view.memory
        await self._llm(me, about, "goal", Field.GOAL, {
            "char": me.name, "other": other.name, "summary": summary, "memory": memory or steps.NONE_YET,
            "previous_goal": view.goal or steps.NONE_YET,
        })
        await self._llm(me, about, "descriptor", Field.DESCRIPTOR, {
            "char": me.name, "other": other.name, "memory": memory or steps.NONE_YET,
            "previous_descriptor": view.descriptor or "someone new",
        })
        if (me.key, about, "familiarity") not in self.done:
            await self._rule(me, about, "familiarity", Field.FAMILIARITY,
                             lambda cur: str(familiarity.bump(familiarity.parse(cur), self.settings.familiarity_gain)))

    async def _decay(self, me: Participant) -> None:
        present = {p.key for p in self.conv.participants}
        for about in await self.store.world.abouts(me.key, Field.FAMILIARITY):
            if about not in present and (me.key, about, "familiarity") not in self.done:
                await self._rule(me, about, "familiarity", Field.FAMILIARITY,
                                 lambda cur: str(familiarity.decay(familiarity.parse(cur), self.settings.familiarity_decay)))

    async def _offscreen(self, me: Participant, mention: Mention) -> None:
        about = mention.key
        view = (await self.store.world.view(me.key)).about(about)
        learned: str | None
        if (me.key, about, "offscreen") in self.done:
            learned = next((i.text for i in view.offscreen if i.conversation_id == self.conv.id), None)
        else:
            known = view.memory or steps.NONE_YET
            learned = await self._llm(me, about, "offscreen", Field.OFFSCREEN, {
                "char": me.name, "other": mention.name, "transcript": self.transcript_for(me), "known": known,
            }, lambda out: None if steps.is_keyword(out, steps.NOTHING) else self._append(me.key, about, Field.OFFSCREEN, self._dated(out)),
                message_id=mention.message_id)
            if learned is not None and steps.is_keyword(learned, steps.NOTHING):
                learned = None
        if not learned:
            return
        view = (await self.store.world.view(me.key)).about(about)
        memory = await self._llm(me, about, "memory", Field.MEMORY, {
            "char": me.name, "other": mention.name, "previous_memory": view.memory or steps.NONE_YET,
            "summaries": _items(view.pair_summaries), "offscreen": _items(view.offscreen),
        }, message_id=mention.message_id) or view.memory
        await self._llm(me, about, "descriptor", Field.DESCRIPTOR, {
            "char": me.name, "other": mention.name, "memory": memory or steps.NONE_YET,
            "previous_descriptor": view.descriptor or "someone only heard about",
        }, message_id=mention.message_id)
        await self._llm(me, about, "offscreen_goal", Field.GOAL, {
            "char": me.name, "other": mention.name, "learned": learned, "memory": memory or steps.NONE_YET,
            "previous_goal": view.goal or steps.NONE_YET,
        }, lambda out: None if steps.is_keyword(out, steps.KEEP) else steps.clean_goal(out), message_id=mention.message_id)

    async def _global(self, me: Participant) -> None:
        view = await self.store.world.view(me.key)
        await self._llm(me, SELF, "global", Field.GLOBAL, {
            "char": me.name, "char_description": self.descriptions.get(me.key, ""),
            "previous_global": view.global_memory or steps.NONE_YET, "summaries": _items(view.summaries),
        })

    # -- writing ---------------------------------------------------------------------------

    def _dated(self, text: str) -> str:
        """`text` opened by the conversation's end, unless it opens with a time of its own: the
        story's own words keep when each line was said."""
        return f"{self.when} {text}" if self.when and not split_stamp(text)[0] else text

    async def _appended(self, current: str | None, text: str) -> str:
        items = [i for i in load_items(current) if i.conversation_id != self.conv.id]
        items.append(Item(self.conv.id, text))
        return dump_items(items[-self.settings.rolling :])

    async def _append(self, owner: str, about: str, name: Field, text: str) -> str:
        return await self._appended(await self.store.world.current(owner, about, name), text)

    async def _rule(self, me: Participant, about: str, step: str, name: Field,
                    compute: Callable[[str | None], Awaitable[str] | str]) -> None:
        async with self.lock:
            await self._check_in_force()
            current = await self.store.world.current(me.key, about, name)
            value = compute(current)
            if not isinstance(value, str):
                value = await value
            await self.store.world.change(me.key, about, name, value, step=step, kind=UpdateKind.RULE,
                                          conversation_id=self.conv.id, message_id=self.conv.end_id)
        self.result.applied += 1

    async def _llm(
        self, me: Participant, about: str, step: str, name: Field, values: dict[str, object],
        value: Callable[[str], Awaitable[str] | str | None] | None = None, *, message_id: int | None = None,
    ) -> str | None:
        """Run one step. Returns the cleaned answer (None if it failed); `value`
        turns it into the stored value (None: store nothing, the answer says so)."""
        if (me.key, about, step) in self.done:
            return await self.store.world.current(me.key, about, name)
        kind = steps.STEPS[step]
        messages, template = steps.request(kind, values)
        message_id = message_id or self.conv.end_id
        limit = min(kind.max_tokens, self.settings.max_tokens)
        try:
            await self._check_in_force()
            if self.own_words:
                lines = extractive.own_words_lines(step, values) or []
                kept = extractive.own_words(step, values, user=self.user, max_tokens=limit,
                                            rare=await story_rarity(self.store, lines))
                if kept is None:
                    return None  # a judgement no sentence of the story makes: left as it was
                answer = kept
            else:
                answer = steps.check_echo(kind.clean(await self.run_call(lambda: self._complete(messages, limit))), template.text)
        except (OmoideError, steps.InvalidOutput) as exc:
            reason = exc.message if isinstance(exc, OmoideError) else str(exc)
            if isinstance(exc, _Stopped):
                raise
            await self.store.world.note(me.key, about, name, step=step, kind=UpdateKind.FAILED, error=reason,
                                        conversation_id=self.conv.id, message_id=message_id,
                                        template=template.label, model=self.model)
            self.result.failed.append(f"{me.name} → {about or 'self'}: {step} ({reason})")
            return None
        async with self.lock:
            await self._check_in_force()
            stored = value(answer) if value is not None else answer
            if stored is not None and not isinstance(stored, str):
                stored = await stored
            if stored is None:
                await self.store.world.note(me.key, about, name, step=step, kind=UpdateKind.LLM, after=answer,
                                            conversation_id=self.conv.id, message_id=message_id,
                                            template=template.label, model=self.model)
            else:
                await self.store.world.change(me.key, about, name, stored, step=step, kind=UpdateKind.LLM,
                                              conversation_id=self.conv.id, message_id=message_id,
                                              template=template.label, model=self.model)
        self.result.applied += 1
        return answer

    async def _check_in_force(self) -> None:
        if not (await self.store.world.conversation(self.conv.id)).in_force:
            raise _Stopped("the conversation was taken out of force by a branch restore", "It resumes when its end is back on the path.")

    async def _complete(self, messages: list, max_tokens: int) -> str:  # type: ignore[type-arg]
        parts: list[str] = []
        async for event in self.backend.stream(messages, max_tokens=max_tokens, cache_key=MEMORY_CACHE_KEY):
            if isinstance(event, TextDelta):
                parts.append(event.text)
        return "".join(parts)


class _Stopped(OmoideError):
    pass
