"""The turn as the TUI shows it: running it in a worker, applying what the
session reports (your message stored, the reply streaming, finishing or
failing: a failure is marked under your message), stopping it, noticing
another window's writes, and background memory work in the status bar. `OmoideApp`
(app.py) builds on this; the layout, input and commands live there."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable

from textual import work
from textual.css.query import NoMatches
from omoide.tui.widgets.composer import Composer
from textual.worker import Worker, WorkerState

from omoide.errors import OmoideError
from omoide.chat.events import (
    ChangedElsewhere, DiarySaved, MemoryRecalled, MessageRewritten, PathKept, ProfileLearned, PromptNotice, ReplyDelta, ReplyFailed, ReplyFinished, ReplyStarted,
    TurnEvent, UserMessageStored,
)
from omoide.memory.events import MemoryEvent, MemoryNotice, MemoryWorkDone, MemoryWorkFailed, MemoryWorkStarted
from omoide.chat.session import ChatSession
from omoide.tui.memos import memo_status
from omoide.tui.notices import NoticesApp
from omoide.tui.messages import MemoryUpdate, TurnUpdate
from omoide.tui.widgets.message import MessageView
from omoide.tui.widgets.status import MEMORY_IDLE, StatusBar
from omoide.tui.widgets.transcript import Transcript

log = logging.getLogger(__name__)


class TurnsApp(NoticesApp):
    """The app's turns: what `OmoideApp` shows while a reply is on its way."""

    session: ChatSession
    reply_view: MessageView | None
    last_error: str
    _unsent: str | None
    """Your message, kept in the composer until it is stored."""
    _show_after_reply: bool
    _tokens_head: int | None
    _memory_running: dict[str, int] = {}
    """Memory work started and not yet ended, by kind: "memory idle" waits for all of it
    (the world pass of /end runs beside the summary and the memos)."""

    @property
    def transcript(self) -> Transcript:
        return self.query_one(Transcript)

    async def show_chat(self) -> None:
        raise NotImplementedError

    async def refresh_diary(self) -> None:
        raise NotImplementedError

    @property
    def turn_running(self) -> bool:
        return any(w.group == "turn" and w.state in (WorkerState.PENDING, WorkerState.RUNNING) for w in self.workers)

    # -- turns -------------------------------------------------------------------------

    # exit_on_error=False: a turn that raises (a CommandError from /regen, a store
    # fault) becomes a notice through on_worker_state_changed, never a crash.
    @work(exclusive=True, group="turn", exit_on_error=False)
    async def run_turn(self, start: Callable[[], AsyncIterator[TurnEvent]]) -> None:
        async for event in start():
            self.post_message(TurnUpdate(event))
            await asyncio.sleep(0)

    async def on_turn_update(self, message: TurnUpdate) -> None:
        try:
            await self.apply_turn_event(message.event)
        except NoMatches:  # the app closed while the event was shown: its widgets are gone
            pass

    async def apply_turn_event(self, event: TurnEvent) -> None:
        status = self.query_one(StatusBar)
        match event:
            case PromptNotice(note=note):  # lore the budget left out, a card cut to fit, a regex script skipped
                self.notify(note, severity="warning", title="Prompt", timeout=10)
            case ChangedElsewhere(note=note, forked=forked):
                self.notify(note, severity="warning", title="Another window", timeout=10)
                # Not forked: your message is added below theirs (the transcript re-reads the path).
                self._show_after_reply = forked
            case PathKept(branch=name):
                self.notify(f"What you left is kept on the branch '{name}': /branch restore {name} brings it back.",
                            timeout=8)
            case MessageRewritten():
                await self.show_chat()
                self.notify("Edited: the new version goes on from here; the old one stays in the tree.", timeout=4)
            case UserMessageStored(message=msg):
                composer = self.query_one(Composer)
                if self._unsent is not None and composer.value.startswith(self._unsent):
                    composer.value = composer.value[len(self._unsent):]  # keep what was typed after Enter
                self._unsent = None
                await self.transcript.add(msg)
            case ReplyStarted(message=msg):
                self.reply_view = await self.transcript.add(msg, live=True)
                status.activity = f"{self.session.scene.speaker_name(msg)} is writing…"
                self._update_tokens()
            case ReplyDelta(text=text):
                if self.reply_view is not None:
                    self.reply_view.append(text)
            case DiarySaved(entry=entry):
                await self.refresh_diary()
                writer = self.session.scene.cast.names(self.session.chat).get(entry.owner or "", self.session.character.display_name)
                self.notify(f"{writer} wrote in the diary.", timeout=3)
            case ProfileLearned(fact=fact, accepted=accepted):
                name = self.session.character.display_name
                then = "It is in your profile now." if accepted else "/profile to accept or reject it."
                self.notify(f"{name} learned about you: {fact.content} {then}", timeout=8, title="Profile")
            case MemoryRecalled(query=query, lines=lines):
                found = f"{len(lines)} moment(s) came back" if lines else "nothing came back"
                # In a scene the one remembering is whoever is speaking, not the chat's character.
                who = self.session.scene.speaker_name(self.reply_view.message) if self.reply_view else self.session.character.display_name
                self.notify(f"{who} tries to remember '{query}': {found}.", timeout=4)
            case ReplyFinished(message=msg, usage=usage):
                if self.reply_view is not None:
                    await self.reply_view.finish(msg)
                self.reply_view = None
                await self.transcript.mark_swipes()
                status.activity = ""
                self._update_tokens(usage.prompt_tokens if usage else None)
                self._tokens_head = msg.id
                await self._after_fork()
                problems = self.session.last_prompt.tool_problems if self.session.last_prompt else []
                if problems:
                    self.notify("; ".join(problems), severity="warning", title="Diary", timeout=10)
            case ReplyFailed(error=error, message=msg):
                if msg is not None and self.reply_view is not None:
                    await self.reply_view.finish(msg)
                    self.reply_view = None
                await self._end_reply_view()  # nothing arrived: the view goes, your message stays
                await self._after_fork()
                self.last_error = f"{error.message} {error.hint}".strip()
                self.notify(self.last_error, severity="error", title="The reply failed", timeout=10)
                await self.transcript.show_failure(self.last_error, partial=msg is not None)  # stays after the notice

    async def _after_fork(self) -> None:
        """The reply went to a branch: show the chat as the other window left it."""
        if self._show_after_reply:
            self._show_after_reply = False
            await self.show_chat()

    async def watch_other_writers(self) -> None:
        """Every second: if another window (or `omoide say`) moved this chat on,
        show it as it is now, and say so."""
        if self.turn_running or len(self.screen_stack) > 1:
            return
        try:
            head = await self.session.stored_head()
            if head is None or head == self.session.own_head:
                return
            self.notify("This chat changed in another window; it now shows what was written there.", title="Another window", timeout=6)
            added = await self.session.written_since(self.transcript.head_id, head) if self.transcript.at_live_end else None
            if added is None or len(added) > 10:
                await self.show_chat()
                return
            for message in added:  # appended below what is shown: cheap, no re-render
                await self.transcript.add(message)
            self.session.accept_head(head)
        except OmoideError as exc:
            log.warning("checking for other windows failed: %s", exc)
        except NoMatches:  # the app is closing
            pass

    def _update_tokens(self, reported: int | None = None) -> None:
        prompt = self.session.last_prompt
        if prompt is None:
            self.query_one(StatusBar).tokens = ""
            return
        # A count the server reported is exact even when ours was an estimate.
        kind = "" if prompt.exact or reported else "~"
        tokens = reported or prompt.total_tokens
        cache = ""
        usage = prompt.usage
        if usage is not None and (usage.cache_read_tokens or usage.cache_write_tokens):
            cache = f" (cache: {usage.cache_read_tokens or 0} read, {usage.cache_write_tokens or 0} written)"
        self.query_one(StatusBar).tokens = f"prompt {kind}{tokens} tok{cache}"

    async def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """The one place a failed worker (a turn, a page load) becomes a visible notice."""
        worker = event.worker
        if worker.group == "turn" and event.state in (WorkerState.CANCELLED, WorkerState.ERROR):
            await self._end_reply_view()
        if event.state is WorkerState.ERROR:
            error = worker.error
            if isinstance(error, OmoideError):
                text, severity = f"{error.message} {error.hint}".strip(), "warning"
            else:
                log.error("worker %s failed", worker.name, exc_info=error)
                text, severity = f"Something went wrong: {error!r}", "error"
            self.last_error = text
            self.notify(text, severity=severity, timeout=10)  # type: ignore[arg-type]

    async def _end_reply_view(self) -> None:
        """A reply cut off: keep what arrived, marked interrupted; drop it if nothing
        arrived (the session then moves the head back to your message)."""
        view, self.reply_view = self.reply_view, None
        self.query_one(StatusBar).activity = ""
        if view is None:
            return
        await view.finish(interrupted=True)
        if not view.text.strip() and view.is_attached:
            await view.remove()

    async def stop_turn_and_wait(self) -> None:
        """Stop a streaming reply and wait until it is stored as interrupted."""
        if await self._cancel_turn():
            # Settle the view now: the caller may replace the transcript before the
            # worker's CANCELLED message reaches on_worker_state_changed.
            await self._end_reply_view()

    async def _cancel_turn(self) -> bool:
        """Cancel the running turn and wait until it has stored what arrived;
        False when no turn was running."""
        running = [w for w in self.workers if w.group == "turn" and w.state in (WorkerState.PENDING, WorkerState.RUNNING)]
        if not running:
            return False
        self.workers.cancel_group(self, "turn")
        for worker in running:
            try:
                await worker.wait()
            except Exception:  # WorkerCancelled, or the failure already shown
                pass
        return True

    def action_stop_reply(self) -> None:
        if self.turn_running:
            self.workers.cancel_group(self, "turn")
            self.notify("Stopped. What arrived is kept.", timeout=3)

    # -- memory events -------------------------------------------------------------------

    def handle_memory_event(self, event: MemoryEvent) -> None:
        """Given to the session's memory worker as `on_memory_event`. Safe from any
        thread or task: it only posts a message to the app."""
        self.post_message(MemoryUpdate(event))

    async def on_memory_update(self, message: MemoryUpdate) -> None:
        status = self.query_one(StatusBar)
        running = self._memory_running = dict(self._memory_running)
        match message.event:
            case MemoryWorkStarted(kind=kind):
                running[kind] = running.get(kind, 0) + 1
            case MemoryWorkDone(kind=kind) | MemoryWorkFailed(kind=kind):
                _ended(running, kind)
        still = [k for k, n in running.items() if n > 0]
        if (label := memo_status(message.event)) is not None:
            status.memory = f"◐ remembering ({still[-1]})…" if label == MEMORY_IDLE and still else label
            return
        match message.event:
            case MemoryWorkStarted(kind=kind):
                status.memory = f"◐ remembering ({kind})…"
            case MemoryWorkDone():
                status.memory = f"◐ remembering ({still[-1]})…" if still else MEMORY_IDLE
                await self.refresh_diary()
            case MemoryWorkFailed(reason=reason):
                status.memory = f"memory: failed ({reason}) — will retry"
            case MemoryNotice(note=note):
                self.notify(note, title="Memory", severity="warning", timeout=10)


def _ended(running: dict[str, int], kind: str) -> None:
    if running.get(kind, 0) > 1:
        running[kind] -= 1
    else:
        running.pop(kind, None)
