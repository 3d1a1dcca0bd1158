"""The Textual app: one client of ChatSession. It shows the transcript, sends
turns in a worker, and routes slash commands through a `CommandTable` filled
with `tui.commands.HANDLERS` (which see the app only as a `tui.host.Host`).
It reads the chat only through the session and its navigator.

Memory events: the constructor sets `session.on_memory_event` to
`handle_memory_event`, and a session opened from it (`switch_chat`) keeps it. Every key binding has an id (`chat.*`, `app.*`) so a keymap can move it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable, Mapping

from textual import events, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.css.query import NoMatches
from textual.notifications import SeverityLevel
from textual.containers import Horizontal, Vertical
from textual.widgets import Input, Static
from textual.worker import Worker, WorkerState

from omoide import commands as slash
from omoide.errors import OmoideError
from omoide.startup import release_gc
from omoide.events import (
    ChangedElsewhere,
    DiarySaved,
    MemoryRecalled,
    ProfileLearned,
    MemoryEvent,
    MemoryWorkDone,
    MemoryWorkFailed,
    MemoryWorkStarted,
    ReplyDelta,
    ReplyFailed,
    ReplyFinished,
    ReplyStarted,
    TurnEvent,
    UserMessageStored,
)
from omoide.safe_text import inert
from omoide.session import ChatSession
from omoide.tui.commands import HANDLERS, open_branch_picker
from omoide.tui.host import CommandTable
from omoide.tui.memos import memo_status, memos_command, open_book
from omoide.tui.memory_commands import MEMORY_HANDLERS
from omoide.tui.scene_commands import SCENE_HANDLERS
from omoide.tui.messages import ComposerReady, MemoryUpdate, TurnUpdate
from omoide.tui.typeahead import TypeAhead, replay
from omoide.tui.widgets.composer import Composer
from omoide.tui.widgets.diary import DiaryPane
from omoide.tui.widgets.message import MessageView
from omoide.tui.widgets.status import MEMORY_IDLE, StatusBar, memory_label
from omoide.tui.widgets.transcript import Transcript

log = logging.getLogger(__name__)


class OmoideApp(App[None]):
    CSS_PATH = "app.tcss"
    TITLE = "omoide"
    BINDINGS = [
        Binding("escape", "stop_reply", "Stop reply", id="chat.stop"),
        Binding("ctrl+d", "toggle_diary", "Diary", id="chat.diary", priority=True),
        Binding("ctrl+p", "inspect_prompt", "Prompt", id="chat.prompt", priority=True),
        Binding("ctrl+l", "chat_list", "Chats", id="chat.list", priority=True),
        Binding("ctrl+b", "branch_list", "Branches", id="chat.branches", priority=True),
        Binding("ctrl+o", "memo_book", "Memo book", id="chat.memos", priority=True),
        Binding("ctrl+left", "swipe(-1)", "Previous swipe", id="chat.swipe_prev", priority=True),
        Binding("ctrl+right", "swipe(1)", "Next swipe", id="chat.swipe_next", priority=True),
        Binding("pageup", "scroll_page(-1)", "Page up", id="chat.page_up", show=False),
        Binding("pagedown", "scroll_page(1)", "Page down", id="chat.page_down", show=False),
        Binding("ctrl+home", "scroll_top", "Top", id="chat.top", show=False),
        Binding("ctrl+end", "scroll_bottom", "Bottom", id="chat.bottom", show=False),
        Binding("ctrl+q", "quit", "Quit", id="app.quit"),
    ]
    ENABLE_COMMAND_PALETTE = False

    def __init__(self, session: ChatSession) -> None:
        super().__init__()
        self.session = session
        self.reply_view: MessageView | None = None
        self.last_error: str = ""
        self._unsent: str | None = None
        self._show_after_reply = False
        self.keymap: dict[str, str] = {}
        self.typeahead = TypeAhead()
        self.commands = CommandTable()
        self.commands.register_all(HANDLERS)
        self.commands.register("memos", memos_command)
        self.commands.register_all(MEMORY_HANDLERS)
        self.commands.register_all(SCENE_HANDLERS)
        session.on_memory_event = self.handle_memory_event
        keymap: Mapping[str, str] | None = getattr(session.settings, "keymap", None)
        if keymap:
            self.set_keymap(dict(keymap))

    def notify(self, message: str, *, title: str = "", severity: SeverityLevel = "information",
               timeout: float | None = None, markup: bool = False) -> None:
        """Notices carry error messages, file paths and the user's own text, none of
        them Textual markup: '[Errno 111]' must show as typed, and a stray '[/]' must
        not raise. So markup is off for every notice, whoever sends it."""
        super().notify(inert(message), title=inert(title), severity=severity, timeout=timeout, markup=False)

    async def on_event(self, event: events.Event) -> None:
        if not self.typeahead.hold(event):
            await super().on_event(event)

    async def on_composer_ready(self, message: ComposerReady) -> None:
        await replay(self, self.query_one(Composer), self.typeahead.release())

    # -- layout -----------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Static(self._title(), id="title", markup=False)
        with Horizontal(id="body"):
            yield Transcript(self.session.navigator, self.session.character.display_name, self.session.user_name)
            yield DiaryPane(self.session.character.display_name)
        with Vertical(id="composer"):
            yield Composer(placeholder=self._placeholder(), id="input")
        yield StatusBar(id="status", markup=False)

    def _placeholder(self) -> str:
        names = ", ".join(c.display_name for c in self.session.present)
        return inert(f"Message {names}…  (/help for commands)")

    def _title(self) -> str:
        names = ", ".join(c.display_name for c in self.session.present)
        return inert(f"{names} — {self.session.chat.title or 'chat #' + str(self.session.chat.id)}")

    async def on_mount(self) -> None:
        status = self.query_one(StatusBar)
        status.backend = f"{self.session.backend.name} · {self.session.backend.model}"
        status.memory = memory_label(self.session.memory_status)
        from omoide.config import config_warnings

        for warning in config_warnings():
            self.notify(warning, severity="warning", timeout=10)
        await self.show_chat()
        self.query_one("#input", Input).focus()
        self.post_message(ComposerReady())  # after the keys already queued, which are held too
        self.set_interval(OTHER_WRITERS_INTERVAL, self.watch_other_writers)
        self.set_timer(FIRST_RUN_DELAY, self._offer_servers)
        self.call_after_refresh(release_gc)

    def _offer_servers(self) -> None:
        """After the chat is on screen: the first-run offer's imports (httpx) and
        probes never delay its first paint, nor the rest of the page mounted after it."""
        from omoide.tui.screens.first_run import start_first_run

        start_first_run(self)

    async def show_chat(self) -> None:
        chat = await self.session.refresh()
        self.session.accept_head(chat.head_id)  # what is shown is what you write after
        self.query_one("#title", Static).update(self._title())
        self.query_one(Composer).placeholder = self._placeholder()
        self.transcript.speaker_names = self.session.cast.names(chat) if self.session.is_scene else {}
        await self.transcript.show_path(chat.head_id)
        await self.refresh_diary()
        self._update_tokens()
        self.show_amnesia()

    def show_amnesia(self) -> None:
        self.query_one(StatusBar).amnesia = ", ".join(self.session.chat.amnesia)

    @property
    def transcript(self) -> Transcript:
        return self.query_one(Transcript)

    @property
    def diary(self) -> DiaryPane:
        return self.query_one(DiaryPane)

    async def refresh_diary(self) -> None:
        """Read and render the diary, when the pane is shown: hidden, it is read
        when it opens (a long chat's diary is thousands of lines to render)."""
        if not self.diary.has_class("visible"):
            return
        memory = await self.session.memory()
        await self.diary.show_entries(memory.diary)

    async def show_diary(self) -> None:
        self.diary.add_class("visible")
        await self.refresh_diary()

    def prefill(self, text: str) -> None:
        self.query_one("#input", Input).value = text

    # -- input -----------------------------------------------------------------------

    async def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id != "input":
            return
        text = event.value
        if not text.strip():
            return
        try:
            command = slash.parse(text)
        except OmoideError as exc:
            self.notify(f"{exc.message} {exc.hint}".strip(), severity="warning", title="Command")
            return
        if command is None:
            if self.turn_running:
                self.notify("A reply is still coming; press Esc to stop it first.", severity="warning")
                return
            # The text stays in the composer until it is stored (a full disk must not lose it).
            self._unsent = text
            self.run_turn(lambda: self.session.send(slash.unescape(text)))
            return
        event.input.value = ""
        await self.commands.dispatch(self, command)

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
        await self.apply_turn_event(message.event)

    async def apply_turn_event(self, event: TurnEvent) -> None:
        status = self.query_one(StatusBar)
        match event:
            case ChangedElsewhere(note=note, forked=forked):
                self.notify(note, severity="warning", title="Another window", timeout=10)
                # Not forked: your message is added below theirs (the transcript re-reads the path).
                self._show_after_reply = forked
            case UserMessageStored(message=msg):
                composer = self.query_one("#input", Input)
                if self._unsent is not None and composer.value.startswith(self._unsent):
                    composer.value = composer.value[len(self._unsent):]  # keep what was typed after Enter
                self._unsent = None
                await self.transcript.add(msg)
            case ReplyStarted(message=msg):
                self.reply_view = await self.transcript.add(msg, live=True)
                status.activity = f"{self.session.speaker_name(msg)} is writing…"
                self._update_tokens()
            case ReplyDelta(text=text):
                if self.reply_view is not None:
                    self.reply_view.append(text)
            case DiarySaved(entry=entry):
                await self.refresh_diary()
                writer = self.session.cast.names(self.session.chat).get(entry.owner or "", self.session.character.display_name)
                self.notify(f"{writer} wrote in the diary.", timeout=3)
            case ProfileLearned(fact=fact, accepted=accepted):
                name = self.session.character.display_name
                then = "It is in your profile now." if accepted else "/profile to accept or reject it."
                self.notify(f"{name} learned about you: {fact.content} {then}", timeout=8, title="Profile")
            case MemoryRecalled(query=query, lines=lines):
                found = f"{len(lines)} moment(s) came back" if lines else "nothing came back"
                self.notify(f"{self.session.character.display_name} tries to remember '{query}': {found}.", timeout=4)
            case ReplyFinished(message=msg, usage=usage):
                if self.reply_view is not None:
                    await self.reply_view.finish(msg)
                self.reply_view = None
                status.activity = ""
                self._update_tokens(usage.prompt_tokens if usage else None)
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

    async def _after_fork(self) -> None:
        """The reply went to a branch: show the chat as the other window left it."""
        if self._show_after_reply:
            self._show_after_reply = False
            try:
                await self.show_chat()
            except NoMatches:  # the app closed meanwhile: nothing left to show it in
                pass

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
        if (label := memo_status(message.event)) is not None:
            status.memory = label
            return
        match message.event:
            case MemoryWorkStarted(kind=kind):
                status.memory = f"◐ remembering ({kind})…"
            case MemoryWorkDone():
                status.memory = MEMORY_IDLE
                await self.refresh_diary()
            case MemoryWorkFailed(reason=reason):
                status.memory = f"memory: failed ({reason}) — will retry"

    def set_keymap(self, keymap: Mapping[str, str]) -> None:
        self.keymap = dict(keymap)
        super().set_keymap(self.keymap)

    def key_help(self) -> list[tuple[str, str]]:
        """(keys, what they do) for every chat binding, as the keymap has them now.
        Read from the declarations, since a screen's own PageUp shadows the app's
        in `active_bindings` even though the app's is the one that acts."""
        rows = []
        for binding in [*Composer.BINDINGS, *self.BINDINGS]:
            assert isinstance(binding, Binding) and binding.id
            keys = self.keymap.get(binding.id, binding.key).split(",")
            shown = " / ".join(self.get_key_display(binding.with_key(key.strip())) for key in keys)
            rows.append((shown, binding.description))
        return rows

    # -- actions ------------------------------------------------------------------------------

    async def action_toggle_diary(self) -> None:
        self.diary.toggle_class("visible")
        if self.diary.has_class("visible"):
            await self.refresh_diary()

    def action_inspect_prompt(self) -> None:
        from omoide.tui.screens.inspector import InspectorScreen

        self.push_screen(InspectorScreen(self.session.last_prompt))

    def action_chat_list(self) -> None:
        from omoide.tui.screens.chats import ChatListScreen

        async def chosen(result: int | str | None) -> None:
            if result is None:
                return
            await self.switch_chat(None if result == "new" else int(result))

        self.push_screen(ChatListScreen(self.session.navigator, self.session.character.display_name, self.session.chat.id), chosen)

    async def switch_chat(self, chat_id: int | None) -> None:
        """Open another chat with this character (None: a new one) in place of this one."""
        if chat_id == self.session.chat.id:
            return
        await self.stop_turn_and_wait()
        await self.session.aclose()
        self.session = await self.session.open_another(chat_id)
        self.transcript.navigator = self.session.navigator
        # The old chat's memory work was cancelled mid-way (it is retried later): no event says so.
        self.query_one(StatusBar).memory = memory_label(self.session.memory_status)
        await self.show_chat()

    async def action_memo_book(self) -> None:
        await open_book(self)

    async def action_branch_list(self) -> None:
        await open_branch_picker(self)

    async def action_swipe(self, step: int) -> None:
        if self.turn_running:
            return
        chosen = await self.session.select_swipe(step)
        if chosen is None:
            self.notify("The last reply has no other swipes. /regen makes one.", timeout=3)
            return
        group, index = await self.session.swipes()
        await self.show_chat()
        self.notify(f"Swipe {index + 1} of {len(group)}", timeout=2)

    async def action_scroll_page(self, direction: int) -> None:
        if direction < 0:
            await self.transcript.page_up()
        else:
            self.transcript.scroll_page_down()

    async def action_scroll_top(self) -> None:
        await self.transcript.show_start((await self.session.refresh()).head_id)

    async def action_scroll_bottom(self) -> None:
        if not self.transcript.at_live_end:
            await self.transcript.show_path((await self.session.refresh()).head_id)
        self.transcript.scroll_end(animate=False)

    async def on_unmount(self) -> None:
        # Closing mid-reply (Ctrl+Q, SIGTERM): let the turn store what arrived first.
        await self._cancel_turn()
        await self.session.aclose()


OTHER_WRITERS_INTERVAL = 1.0
"""Seconds between checks for another window writing in the same chat."""
FIRST_RUN_DELAY = 0.5
"""Seconds after mounting before the first-run offer imports its parts and probes."""
