"""Running the check: each arm plays the script (script.py) through real chat
sessions on a real SQLite file in a data directory of its own, which is
deleted afterwards; your own data directory is never opened.

Every turn goes the way a user's does (`ChatSession.send`), memory work
included (it is waited for, and timed apart from the reply). The evenings are
simulated days on the session's clock. Questions are asked on a side branch
and undone, as /undo does, so the next question is asked in the same story.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from pathlib import Path

from omoide.characters.library import find_character
from omoide.chat.events import ReplyFailed, ReplyFinished
from omoide.chat.session import ChatSession
from omoide.check.arms import COMMON, Arm
from omoide.check.reader import read, score
from omoide.check.results import Answer, ArmResult, Horizon, Turn
from omoide.check.script import (
    ASK_DAY, DAYS, FACTS, GUEST, HOST, PROBES, TELL_CUE, TOLD, Probe, facts_on, padding_line, probe,
)
from omoide.config.settings import Settings
from omoide.domain.chat import Role
from omoide.errors import OmoideError
from omoide.llm.base import Backend
from omoide.store import Store

START = datetime(2026, 3, 2, 19, 0).astimezone()
"""The first evening (a Monday), in local time: the prompt's stamps are local."""
TURN_MINUTES = 3
Advance = Callable[[int], None]


def default_padding(settings: Settings) -> int:
    """Turns of ordinary talk per evening: enough that each evening's facts
    leave the verbatim window (of either style) before the next evening."""
    window = max(settings.memory.recent_messages, settings.memory.memo_recent_messages)
    return max(4, (window + 5) // 2)


def planned_turns(padding: int) -> int:
    """Turns one arm takes (for the progress bar)."""
    asked_by_day = sum(1 for p in PROBES if p.stage == "day")
    return len(FACTS) + DAYS * padding + asked_by_day + 1 + 3 + padding


class Clock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        return self.now

    def evening(self, day: int) -> None:
        self.now = START + timedelta(days=day - 1)

    def tick(self) -> None:
        self.now += timedelta(minutes=TURN_MINUTES)


@contextmanager
def isolated_home() -> Iterator[Path]:
    """A throw-away OMOIDE_HOME: characters (the bundled ones only), lorebooks,
    logs and the database of the check live and die there. Settings and the
    backend are made before, from yours."""
    saved = {name: os.environ.get(name) for name in ("OMOIDE_HOME", "OMOIDE_CONFIG")}
    with tempfile.TemporaryDirectory(prefix="omoide-check-") as home:
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
    def __init__(self, arm: Arm, settings: Settings, backend: Backend, *, summarizer: Backend | None = None,
                 padding: int, advance: Advance = lambda n: None) -> None:
        self.arm = arm
        self.settings = settings.updated(**COMMON, **arm.overrides)
        self.backend = backend
        self.summarizer = summarizer
        self.padding = padding
        self.advance = advance
        self.clock = Clock()
        self.result = ArmResult(arm.name, arm.about)
        self.planted: dict[str, int] = {}
        self.held: dict[str, int] = {}
        self.alive: dict[str, bool] = {}
        self.store: Store | None = None

    async def run(self) -> ArmResult:
        with isolated_home() as home:
            self.store = await Store.open(home / "omoide.db")
            self.store.clock = self.clock
            try:
                await self._play()
            except OmoideError as exc:
                self.result.error = f"{exc.message} {exc.hint}".strip()
            finally:
                await self.store.close()
        self.result.horizons = [Horizon(key, self.held.get(key, 0), self.alive.get(key, False)) for key in self.planted]
        return self.result

    async def _open(self, name: str) -> ChatSession:
        assert self.store is not None
        session = await ChatSession.open(self.store, find_character(name), self.settings, self.backend,
                                         new=True, summarizer=self.summarizer)
        session.clock = self.clock
        if self.arm.hidden:
            await session.user.set_amnesia(list(self.arm.hidden))
        return session

    async def _play(self) -> None:
        self.clock.evening(1)
        cafe = await self._open(HOST)
        try:
            for day in range(1, DAYS + 1):
                await self._evening(cafe, day)
                for fact in facts_on(day):
                    await self._turn(cafe, fact.line, "plant")
                    head = await cafe.head()
                    self.planted[fact.key] = head.depth - 1 if head else 0  # Kai's message, before the reply
                    self.held[fact.key], self.alive[fact.key] = 0, True
                for n in range(self.padding):
                    await self._turn(cafe, padding_line(day * self.padding + n), "pad")
            await self._evening(cafe, ASK_DAY)
            for asked in (p for p in PROBES if p.stage == "day"):
                await self._ask(cafe, asked)
            await self._boundary(cafe)
        finally:
            await cafe.aclose()

    async def _boundary(self, cafe: ChatSession) -> None:
        """Wren in a chat of her own, then invited into Suzune's: asked before
        Suzune tells her (she must not know), and after (she knows, and from whom)."""
        own = await self._open(GUEST)
        try:
            await self._turn(own, "Good evening, Wren.", "scene", track=False)
            await self._ask(own, probe("own_chat"))
        finally:
            await own.aclose()
        await cafe.scene.invite(GUEST)
        await self._ask(cafe, probe("invited"))
        await self._tell(cafe)
        for n in range(self.padding):
            who = "Wren" if n % 2 == 0 else "Suzune"
            await self._turn(cafe, f"{who}, {padding_line(n)[0].lower()}{padding_line(n)[1:]}", "scene", speaker=who)
        await self._ask(cafe, probe("told"))

    async def _tell(self, cafe: ChatSession) -> None:
        """In the story, Suzune tells Wren: your cue and her line, stored as said."""
        store = cafe.store
        self.clock.tick()
        head = (await cafe.refresh()).head_id
        cue = await store.messages.add(cafe.chat.id, head, Role.USER, TELL_CUE, expected_head=head)
        self.clock.tick()
        told = await store.messages.add(cafe.chat.id, cue.id, Role.ASSISTANT, TOLD, speaker=HOST, expected_head=cue.id)
        cafe.accept_head(told.id)
        await cafe.refresh()

    async def _evening(self, session: ChatSession, day: int) -> None:
        """A new evening: with the world, the last one's conversation ends (it was
        left idle) and its world pass runs before anything is said."""
        self.clock.evening(day)
        if not self.arm.world:
            return
        chat = await session.refresh()
        conversation = await session.world.idle_end(chat, session.scene.participants)
        if conversation is not None:
            await session.world.run(conversation.id)

    async def _turn(self, session: ChatSession, text: str, phase: str, *, speaker: str | None = None,
                    track: bool = True) -> str:
        self.clock.tick()
        started = time.perf_counter()
        reply, usage = "", None
        async for event in session.send(text, speaker=speaker):
            if isinstance(event, ReplyFinished):
                reply, usage = event.message.content, event.usage
            elif isinstance(event, ReplyFailed):
                raise event.error
        replied = time.perf_counter()
        await session.wait_for_memory_work()
        waited = time.perf_counter() - replied
        self.advance(1)
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
        if track and session.character.id == HOST and who == session.character.display_name:
            self._track(prompt.rendered() + "\n".join(prompt.recalled), depth)
        return reply

    def _track(self, text: str, depth: int) -> None:
        """The memory horizon: how long after it was said each fact stayed in every prompt."""
        folded = text.casefold()
        evidence = {f.key: f.evidence for f in FACTS}
        for key, said_at in self.planted.items():
            if not self.alive[key]:
                continue
            if evidence[key] in folded:
                self.held[key] = max(self.held[key], depth - said_at)
            else:
                self.alive[key] = False

    async def _ask(self, session: ChatSession, asked: Probe) -> None:
        speaker = None
        if session.scene.is_scene:
            speaker = "Wren" if asked.speaker == GUEST else "Suzune"
        answer = await self._turn(session, asked.question, "probe", speaker=speaker)
        prompt = session.last_prompt
        kept: bool | None = None
        if prompt is not None and not asked.abstain:  # what the recall tool brought back counts as in reach
            kept = score(asked, read(asked, prompt.rendered() + "\n" + "\n".join(prompt.recalled)))
        self.result.answers.append(Answer(asked.key, asked.category, asked.question, asked.speaker, answer,
                                          score(asked, answer), kept))
        await session.tree.undo()  # the question and its answer stay on a side branch
