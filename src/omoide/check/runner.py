"""Running the check: each arm plays a scenario (scenario.py) through real chat
sessions on a real SQLite file in a data directory of its own, which is deleted
afterwards; your own data directory is never opened.

Every turn goes the way a user's does (`ChatSession.send`, `regenerate`,
`edit_last`, `/invite`, `/branch`), memory work included (it is waited for, and
timed apart from the reply). Days are simulated on the session's clock.
Questions are asked on a side branch and undone, as /undo does, so the next
question is asked in the same story.

"Kept" is read from the prompt less every reply the model wrote in the story:
a character's own earlier guesses are not evidence (a fact the story has the
character say is stored as said, and counts).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from pathlib import Path

from omoide.characters.library import find_character
from omoide.chat.events import ReplyFailed, ReplyFinished, TurnEvent
from omoide.chat.session import ChatSession
from omoide.check.arms import COMMON, Arm
from omoide.check.reader import Reader, facts_told, names_stale, score
from omoide.check.results import Answer, ArmResult, Horizon, Turn
from omoide.check.scenario import Event, Question, Scenario
from omoide.check.sources import source_of
from omoide.config.settings import Settings
from omoide.characters.model import Character
from omoide.domain.chat import Role
from omoide.errors import OmoideError
from omoide.llm.base import Backend
from omoide.store import Store

TURN_MINUTES = 3
Advance = Callable[[int], None]


class Clock:
    def __init__(self, start: datetime) -> None:
        self.start = start
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def day(self, day: int) -> None:
        self.now = max(self.now, self.start + timedelta(days=day - 1))

    def tick(self) -> None:
        self.now += timedelta(minutes=TURN_MINUTES)


SCRATCH = Path("/dev/shm")
"""Where a throw-away home goes when TMPDIR does not say: memory, on Linux. Its
database is written at every turn and never kept, and on a disk the WAL's
checkpoints wait for the disk: an arm of months-1 took about 15 % longer in /tmp."""


SCRATCH_FREE = 256 << 20
"""Free bytes the scratch must have, else tempfile's choice (a container's
/dev/shm is often 64 MB): a months-1 arm's home peaks near 7 MB, a scenario
written elsewhere may be far longer, and the arms run side by side."""


def scratch_dir() -> str | None:
    if os.environ.get("TMPDIR") or not (SCRATCH.is_dir() and os.access(SCRATCH, os.W_OK | os.X_OK)):
        return None  # tempfile's own choice
    try:
        return str(SCRATCH) if shutil.disk_usage(SCRATCH).free >= SCRATCH_FREE else None
    except OSError:
        return None


@contextmanager
def isolated_home() -> Iterator[Path]:
    """A throw-away OMOIDE_HOME: characters (the bundled ones only), lorebooks,
    logs and the database of the check live and die there. Settings and the
    backend are made before, from yours."""
    saved = {name: os.environ.get(name) for name in ("OMOIDE_HOME", "OMOIDE_CONFIG")}
    with tempfile.TemporaryDirectory(prefix="omoide-check-", dir=scratch_dir()) as home:
        os.environ["OMOIDE_HOME"] = home
        os.environ.pop("OMOIDE_CONFIG", None)
        try:
            yield Path(home)
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value


class ArmRun:
    def __init__(self, arm: Arm, scenario: Scenario, settings: Settings, backend: Backend, *,
                 summarizer: Backend | None = None, advance: Advance = lambda n: None) -> None:
        self.arm = arm
        self.scenario = scenario
        self.settings = settings.updated(**(COMMON | {"user_name": scenario.user}), **arm.overrides)
        self.backend = backend
        self.summarizer = summarizer
        self.advance = advance
        self.clock = Clock(datetime.fromisoformat(scenario.start).astimezone())
        self.result = ArmResult(arm.name, arm.about, scenario=scenario.name, family=scenario.family,
                                seed=scenario.seed)
        self.planted: dict[str, int] = {}
        self.held: dict[str, int] = {}
        self.alive: dict[str, bool] = {}
        self.written: set[str] = set()
        """Every reply the model wrote in the story: never evidence."""
        self.store: Store | None = None
        self.sessions: dict[str, ChatSession] = {}
        self.current = "host"
        self.padded = 0
        self.characters: dict[str, Character] = {}
        self._lines: dict[str, frozenset[str]] = {}
        self.tracked = False
        """A prompt of the story (not a question's) was read for the horizon."""

    async def run(self) -> ArmResult:
        study = getattr(self.backend, "study", None)
        if study is not None:
            study(self.scenario)
        with isolated_home() as home:
            self.store = await Store.open(home / "omoide.db")
            self.store.clock = self.clock
            try:
                self.sessions["host"] = await self._open(self.scenario.host)
                for event in self.scenario.events:
                    await self._play(event)
            except OmoideError as exc:
                self.result.error = f"{exc.message} {exc.hint}".strip()
            finally:
                for session in self.sessions.values():
                    await session.aclose()
                await self.store.close()
        if self.tracked:  # a story of stored lines and questions has no prompt to follow a fact through
            self.result.horizons = [Horizon(key, self.held.get(key, 0), self.alive.get(key, False)) for key in self.planted]
        return self.result

    def character(self, cid: str) -> Character:
        if cid not in self.characters:
            self.characters[cid] = find_character(cid)
        return self.characters[cid]

    def display(self, cid: str) -> str:
        return self.character(cid).display_name if cid else ""

    async def _open(self, cid: str) -> ChatSession:
        assert self.store is not None
        session = await ChatSession.open(self.store, self.character(cid), self.settings, self.backend,
                                         new=True, summarizer=self.summarizer)
        session.clock = self.clock
        if self.arm.hidden:
            await session.user.set_amnesia(list(self.arm.hidden))
        return session

    @property
    def session(self) -> ChatSession:
        return self.sessions[self.current]

    async def _play(self, e: Event) -> None:
        session = self.session
        match e.kind:
            case "day":
                await self._day(e.value)
            case "user":
                if e.reply:
                    await self._stored(e.value, e.reply, e.speaker or self.scenario.host)
                else:
                    await self._turn(session.send(e.value, speaker=self.display(e.speaker) or None), "plant" if e.fact else "talk")
                if e.fact:
                    head = await session.head()
                    said_at = (head.depth if head else 0) - (0 if e.reply else 1)  # the reply, or your line before it
                    self.planted[e.fact], self.held[e.fact], self.alive[e.fact] = said_at, 0, True
            case "pad":
                for _ in range(e.value):
                    line = self.scenario.padding[self.padded % len(self.scenario.padding)]
                    self.padded += 1
                    await self._turn(session.send(line), "pad")
            case "invite":
                await session.scene.invite(self.display(e.value))
            case "leave":
                await session.scene.leave(self.display(e.value))
            case "branch_save":
                await session.tree.save_branch(e.value, force=True)
            case "branch_restore":
                await session.tree.restore_branch(e.value)
            case "swipe":
                await self._swipe(e.value)
            case "edit":
                await self._turn(session.edit_last(e.value), "edit")
            case "remember":
                await session.user.remember(e.value, importance=e.importance)
            case "pin":
                await session.pins.pin_text(e.value)
            case "chat":
                await self._chat(e.value)
            case "end":
                await self._end(session)
            case "ask":
                await self._ask(self.scenario.questions[e.value])


    async def _day(self, day: int) -> None:
        """A new day: with the world, the last one's conversation ends (it was left
        idle) and its world pass runs before anything is said."""
        self.clock.day(day)
        if self.arm.world:
            for session in self.sessions.values():
                chat = await session.refresh()
                conversation = await session.world.idle_end(chat, session.scene.participants)
                if conversation is not None:
                    await session.world.run(conversation.id)

    async def _end(self, session: ChatSession) -> None:
        if not self.arm.world:
            return
        conversation = await session.end_conversation(background=False)
        await session.world.run(conversation.id)

    async def _chat(self, which: str) -> None:
        """'new': a new chat with the host (the old conversation ends first);
        'host': back to the host's first chat; a character id: a chat of that
        character's own."""
        if which == "host":
            self.current = "host"
            return
        if which == "new":
            await self._end(self.session)
            self.sessions[f"new{len(self.sessions)}"] = session = await self._open(self.scenario.host)
            self.current = next(k for k, v in self.sessions.items() if v is session)
            return
        if which not in self.sessions:
            self.sessions[which] = await self._open(which)
        self.current = which

    async def _stored(self, cue: str, line: str, speaker: str) -> None:
        """Your cue and a character's line, stored as said (the story decides it)."""
        session = self.session
        store = session.store
        self.clock.tick()
        head = (await session.refresh()).head_id
        said = await store.messages.add(session.chat.id, head, Role.USER, cue, expected_head=head)
        self.clock.tick()
        told = await store.messages.add(session.chat.id, said.id, Role.ASSISTANT, line,
                                        speaker=speaker if session.scene.is_scene else None, expected_head=said.id)
        session.accept_head(told.id)
        await session.refresh()
        session.remember_stored()
        await session.wait_for_memory_work()

    async def _swipe(self, line: str) -> None:
        """A reply that is swiped away: stored as the character's, then replaced by
        another (the swipe a user keeps). It must reach no memory."""
        session = self.session
        head = await session.head()
        if head is None or head.parent_id is None:
            return
        self.clock.tick()
        gone = await session.store.messages.add(session.chat.id, head.parent_id, Role.ASSISTANT, line,
                                                speaker=head.speaker, expected_head=head.id)
        session.accept_head(gone.id)
        await session.refresh()
        await self._turn(session.regenerate(), "swipe")

    async def _turn(self, events: object, phase: str, *, question: bool = False) -> str:
        self.clock.tick()
        session = self.session
        started = time.perf_counter()
        reply, usage = "", None
        async for event in events:  # type: ignore[attr-defined]
            assert isinstance(event, TurnEvent)
            if isinstance(event, ReplyFinished):
                reply, usage = event.message.content, event.usage
            elif isinstance(event, ReplyFailed):
                raise event.error
        replied = time.perf_counter()
        await session.wait_for_memory_work()
        waited = time.perf_counter() - replied
        self.advance(1)
        if not question:
            self.written.add(reply.strip())
        prompt = session.last_prompt
        if prompt is None:
            return reply
        if usage is not None and usage.prompt_tokens:
            tokens, source = usage.prompt_tokens, "server"
        else:
            tokens, source = prompt.total_tokens, "estimate" if prompt.count_method == "estimate" else "tokenizer"
        head = await session.head()
        depth = head.depth if head else 0
        if prompt.dropped and self.result.overflow_at is None:
            self.result.overflow_at = depth
        who = prompt.speaker.split(":")[0] if prompt.speaker else session.character.display_name
        self.result.turns.append(Turn(who, phase, tokens, source, replied - started, waited, bool(prompt.dropped)))
        if self.current == "host" and who == session.character.display_name and not question:
            self._track(prompt.rendered() + "\n".join(prompt.recalled), depth)
        return reply

    def evidence(self, text: str) -> str:
        """What a reader may take as evidence: the prompt less the model's own replies."""
        for written in self.written:
            if written:
                text = text.replace(written, "")
        return text

    def _track(self, text: str, depth: int) -> None:
        """The memory horizon: how long after it was said each fact stayed in every prompt."""
        self.tracked = True
        alive = [key for key, on in self.alive.items() if on]
        if not alive:
            return
        folded = text.casefold()
        told: set[str] | None = None
        for key in alive:
            fact = self.scenario.facts[key]
            held = all(any(w in folded for w in group) for group in fact.evidence)
            if held:
                if told is None:
                    told = set().union(*(self._told_in(line) for line in self.evidence(text).split("\n")))
                held = key in told
            if held:
                self.held[key] = max(self.held[key], depth - self.planted[key])
            else:
                self.alive[key] = False

    def _told_in(self, line: str) -> frozenset[str]:
        """The facts a statement of `line` tells (`holds`). A statement and the
        sentences beside it never span two lines (only its dates do, which
        `holds` does not read), and a prompt repeats most of the last one's
        lines, so each line is read once."""
        told = self._lines.get(line)
        if told is None:
            told = self._lines[line] = facts_told(line, self.scenario.facts.values())
        return told

    async def _ask(self, q: Question) -> None:
        session = self.session
        speaker = self.display(q.speaker) if session.scene.is_scene and q.speaker else None
        if session.scene.is_scene and speaker is None:
            speaker = self.display(self.scenario.host)
        answer = await self._turn(session.send(q.ask, speaker=speaker), "question", question=True)
        prompt = session.last_prompt
        kept: bool | None = None
        if prompt is not None:
            kept = Reader(self.evidence(prompt.rendered() + "\n" + "\n".join(prompt.recalled)), self.scenario).read(q).right
        right = score(q, answer, self.scenario)
        stale = not right and names_stale(q, answer)
        self.result.answers.append(Answer(q.id, q.category, q.ask, q.speaker or self.scenario.host, answer, right, kept,
                                          stale_named=stale, knowable=not q.abstain and bool(q.answer),
                                          source=source_of(self.scenario, q.needs)))
        await session.tree.undo()  # the question and its answer stay on a side branch
