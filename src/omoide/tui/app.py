"""The Textual app: one client of ChatSession. It shows the transcript, sends
turns in a worker, and routes slash commands through the one table of
`tui/slash.py` (whose handlers see the app only as a `tui.host.Host`).
It reads the chat only through the session and its navigator.

Turns, and background memory work as the status bar shows it, are in
`tui/turns.py` (`TurnsApp`); switching chat, character, name and theme in
`tui/switching.py` (`SwitchingApp`, which this extends). Memory events: the
constructor sets `session.on_memory_event` to `handle_memory_event`, and a
session opened from it (`switch_chat`, `switch_character`) keeps it. Every key
binding has an id (`chat.*`, `app.*`) so a keymap can move it.

Keys typed before the composer is ready are held (`tui/typeahead.py`) and
typed into it once it is.
"""

from __future__ import annotations

import logging
from pathlib import Path

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.widgets import Static

from omoide.tui import slash
from omoide.tui.command_line import unescape
from omoide.characters.portrait import portrait_file
from omoide.config.keymap import keymap_problems, usable_keymap
from omoide.errors import OmoideError
from omoide.llm.base import Backend
from omoide.startup import release_gc
from omoide.safe_text import inert
from omoide.chat.session import ChatSession
from omoide.tui.commands import open_branch_picker
from omoide.tui.download import Downloads
from omoide.tui.host import CommandTable
from omoide.tui.memos import open_book
from omoide.tui.messages import ComposerReady
from omoide.tui.palette import ChatCommands, PaletteItem, gather
from omoide.tui.keys import KeysApp
from omoide.tui.switching import SwitchingApp
from omoide.tui.typeahead import Held, TypeAhead, replay
from omoide.tui.widgets.composer import Composer
from omoide.tui.widgets.diary import DiaryPane
from omoide.tui.widgets.message import MessageView
from omoide.tui.widgets.status import StatusBar, demo_note, memory_label
from omoide.tui.widgets.transcript import Transcript

log = logging.getLogger(__name__)


class OmoideApp(KeysApp, SwitchingApp):
    CSS_PATH = "app.tcss"
    TITLE = "omoide"
    BINDINGS = [
        Binding("escape", "stop_reply", "Stop reply", id="chat.stop"),
        Binding("ctrl+d", "toggle_diary", "Diary", id="chat.diary", priority=True),
        Binding("ctrl+p", "inspect_prompt", "Prompt", id="chat.prompt", priority=True),
        Binding("ctrl+l", "chat_list", "Chats", id="chat.list", priority=True),
        Binding("ctrl+b", "branch_list", "Branches", id="chat.branches", priority=True),
        Binding("ctrl+o", "memo_book", "Memo book", id="chat.memos", priority=True),
        Binding("ctrl+t", "characters", "Characters", id="chat.characters", priority=True),
        Binding("ctrl+left", "swipe(-1)", "Previous swipe", id="chat.swipe_prev", priority=True),
        Binding("ctrl+right", "swipe(1)", "Next swipe", id="chat.swipe_next", priority=True),
        Binding("ctrl+up", "select_messages", "Select a message (then e, d, r, c, b act on it)", id="chat.select",
                priority=True),
        Binding("pageup", "scroll_page(-1)", "Page up", id="chat.page_up", show=False),
        Binding("pagedown", "scroll_page(1)", "Page down", id="chat.page_down", show=False),
        Binding("ctrl+home", "scroll_top", "Top", id="chat.top", show=False),
        Binding("ctrl+end", "scroll_bottom", "Bottom", id="chat.bottom", show=False),
        Binding("f1", "palette", "Command palette", id="chat.palette", priority=True),
        Binding("f2", "toggle_mouse", "Mouse off/on (select text with the terminal)", id="chat.mouse", priority=True),
        Binding("ctrl+q", "quit", "Quit", id="app.quit"),
    ]
    NOT_IN_PALETTE = frozenset({"chat.palette", "chat.history_prev", "chat.history_next", "chat.send", "chat.newline"})
    ENABLE_COMMAND_PALETTE = False

    def __init__(self, session: ChatSession) -> None:
        super().__init__()
        self.session = session
        self.reply_view: MessageView | None = None
        self.last_error: str = ""
        self._unsent: str | None = None
        self._show_after_reply = False
        self._tokens_head: int | None = session.chat.head_id if session.last_prompt else None
        """The head the status bar's prompt size was counted at (a prompt built before is the head's)."""
        self.downloads = Downloads(self)
        self.owned_backends: list[Backend] = []
        """Backends the app opened (a model chosen or downloaded here), closed when it ends."""
        self.keymap: dict[str, str] = {}
        self.typeahead = TypeAhead()
        self.mouse_on = True
        self.commands = CommandTable({command.name: command.run for command in slash.TABLE},
                                     recount=frozenset(command.name for command in slash.TABLE if command.changes_prompt))
        session.on_memory_event = self.handle_memory_event
        self.keymap_warnings = keymap_problems(session.settings.ui.keymap)
        """What of `[ui.keymap]` is ignored, and why: said when the chat starts."""
        keymap = usable_keymap(session.settings.ui.keymap)
        if keymap:
            self.set_keymap(keymap)

    def copy_to_clipboard(self, text: str) -> None:
        """Every copy (/copy, `c` on a message, a selection) leaves as the text is
        shown: an ESC[201~ in a reply would end a bracketed paste and run what follows."""
        super().copy_to_clipboard(inert(text))

    async def on_event(self, event: events.Event) -> None:
        if not self.typeahead.hold(event):
            await super().on_event(event)

    async def on_composer_ready(self, message: ComposerReady) -> None:
        await self.type_ahead(self.typeahead.release())

    async def type_ahead(self, held: Held) -> None:
        composer = self.query_one(Composer)
        if composer.has_focus or not held:
            await replay(self, composer, held)
        else:  # after the focus has moved back (the welcome just closed): Enter is the composer's
            composer.focus()
            self.call_later(replay, self, composer, held)

    # -- layout -----------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Static(self._title(), id="title", markup=False)
        with Horizontal(id="body"):
            yield Transcript(self.session.navigator, self.session.character.display_name, self.session.user.name)
            yield DiaryPane(self.session.character.display_name)
        with Vertical(id="composer"):
            yield Composer(placeholder=self._placeholder(), id="input")
        yield StatusBar(id="status", markup=False)

    def _placeholder(self) -> Content:
        """Plain text (a card's name is never markup), as `Content`: a TextArea reads a str placeholder as markup."""
        names = ", ".join(c.display_name for c in self.session.scene.present)
        return Content(inert(f"Message {names}…  (/help, {self.keys_of('chat.palette')}: palette)"))

    def _title(self) -> str:
        names = ", ".join(c.display_name for c in self.session.scene.present)
        return inert(f"{names} — {self.session.chat.title or 'chat #' + str(self.session.chat.id)}")

    async def on_mount(self) -> None:
        status = self.query_one(StatusBar)
        self.show_backend()
        status.memory = memory_label(self.session.memory_status)
        from omoide.chat.runtime import storage_warnings
        from omoide.config.settings import config_warnings

        # One notice a source (at most two notices show at once): every keymap problem together
        for warning in [*config_warnings(), "\n".join(self.keymap_warnings), *storage_warnings(self.session)]:
            if warning:
                self.notify(warning, severity="warning", timeout=10)
        self._apply_saved_theme()
        await self.show_chat()
        self.query_one(Composer).focus()
        self.set_interval(OTHER_WRITERS_INTERVAL, self.watch_other_writers)
        if self.session.settings.ui.welcomed:
            self.post_message(ComposerReady())  # after the keys already queued, which are held too
            self.set_timer(FIRST_RUN_DELAY, self._first_run)
        else:  # the welcome asks your name first: keys typed until it is up are its
            self.call_after_refresh(self._first_run)
        self.call_after_refresh(release_gc)

    def _first_run(self) -> None:
        """After the chat is on screen: the first-run screen's imports (httpx) and
        probes never delay its first paint, nor the rest of the page mounted after it."""
        from omoide.tui.screens.first_run import start_first_run

        try:
            start_first_run(self)
        except Exception:
            self.post_message(ComposerReady())  # no welcome after all: the keys held are the composer's
            raise
        self.downloads.resume_unfinished()

    def show_backend(self) -> None:
        """The status bar's model, and on the small embedded model, that it is a demo."""
        status = self.query_one(StatusBar)
        status.backend = f"{self.session.backend.name} · {self.session.backend.model}"
        status.note = demo_note(self.session.backend)

    def use_backend(self, backend: Backend) -> None:
        """Answer with `backend` from the next turn on (the app closes it when it ends)."""
        self.owned_backends.append(backend)
        self.session.use_backend(backend)
        self.show_backend()

    async def show_chat(self) -> None:
        chat = await self.session.refresh()
        self.session.accept_head(chat.head_id)  # what is shown is what you write after
        self.query_one("#title", Static).update(self._title())
        self.query_one(Composer).placeholder = self._placeholder()
        self.transcript.speaker_names = self.session.scene.cast.names(chat) if self.session.scene.is_scene else {}
        self.transcript.portraits = self._portraits()
        await self.transcript.show_path(chat.head_id)
        await self.refresh_diary()
        self._update_tokens()
        if self.session.last_prompt is not None and chat.head_id != self._tokens_head:
            # Another head (a restore, an undo, a swipe): the size shown was the old one's.
            self._start_recount(chat.head_id)
        self.show_amnesia()

    def _portraits(self) -> dict[str, Path]:
        """In a scene with `[ui] portraits` on: each speaker's portrait file, by id."""
        if not self.session.scene.is_scene or not self.session.settings.ui.portraits:
            return {}
        cast = self.session.scene.cast
        files = {key: portrait_file(cast.character(key)) for key in self.transcript.speaker_names}
        return {key: path for key, path in files.items() if path is not None}

    def _start_recount(self, head_id: int | None) -> None:
        async def recount() -> None:  # a function, not a coroutine: one a newer recount replaces never starts
            await self._recount(head_id)
        # Textual types a coroutine function's coroutine as Coroutine[None, None, T]; it runs ours alike.
        self.run_worker(recount, group="recount", exclusive=True, exit_on_error=False)  # type: ignore[arg-type]

    async def _recount(self, head_id: int | None) -> None:
        self.query_one(StatusBar).tokens = "prompt: counting…"
        if head_id is not None:
            await self.session.build_prompt(head_id)
        self._tokens_head = head_id
        self._update_tokens()

    def recount_prompt(self) -> None:
        head = self.session.chat.head_id
        if head is not None and not self.turn_running:  # a turn builds its own
            self._start_recount(head)

    def show_amnesia(self) -> None:
        self.query_one(StatusBar).amnesia = ", ".join(self.session.chat.amnesia)

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
        self.query_one(Composer).value = text

    # -- message selection: actions on any message -------------------------------------------

    def action_select_messages(self) -> None:
        """Focus the newest message shown; its keys then act on it (tui/message_actions.py)."""
        if self.transcript.select_newest() is None:
            self.notify("There is no message to select yet.", timeout=3)

    def leave_selection(self) -> None:
        if isinstance(self.focused, MessageView):
            self.query_one(Composer).focus()
            if self.transcript.at_live_end:
                self.transcript.scroll_end(animate=False)  # re-anchors

    async def on_message_view_act(self, event: MessageView.Act) -> None:
        from omoide.tui.message_actions import act

        await act(self, event.view.message, event.action)

    # -- input -----------------------------------------------------------------------

    async def on_composer_submitted(self, event: Composer.Submitted) -> None:
        text = event.value
        if not text.strip():
            return
        event.composer.earlier.reset()  # the next Up reads the path again, this message on it
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
            self.run_turn(lambda: self.session.send(unescape(text)))
            return
        event.composer.value = ""
        await self.commands.dispatch(self, command)


    # -- actions ------------------------------------------------------------------------------

    def action_palette(self) -> None:
        from textual.command import CommandPalette

        if not isinstance(self.screen, CommandPalette):
            self.push_screen(CommandPalette(providers=[ChatCommands], placeholder="Find a command, key, character, chat, branch or theme…"))

    async def palette_items(self) -> list[PaletteItem]:
        return await gather(self)

    def actions_for_palette(self) -> list[tuple[str, str, str]]:
        return [(self.describe(b), self.keys_of(b.id), b.action) for b in self.BINDINGS
                if isinstance(b, Binding) and b.id and b.id not in self.NOT_IN_PALETTE]

    async def on_composer_history_wanted(self, message: Composer.HistoryWanted) -> None:
        composer = self.query_one(Composer)
        history = composer.earlier
        if not history.walking(composer.value) and message.direction < 0:
            path = await self.session.transcript(limit=HISTORY_DEPTH)
            history.load([m.content for m in path if m.role == "user"])
        text = history.step(message.direction, composer.value)
        if text is not None:
            composer.value = text

    async def action_toggle_diary(self) -> None:
        self.diary.toggle_class("visible")
        if self.diary.has_class("visible"):
            await self.refresh_diary()

    def action_inspect_prompt(self) -> None:
        from omoide.tui.screens.inspector import InspectorScreen

        self.push_screen(InspectorScreen(self.session.last_prompt))

    def action_characters(self) -> None:
        from omoide.tui.screens.characters import open_picker

        open_picker(self)

    async def action_memo_book(self) -> None:
        await open_book(self)

    async def action_branch_list(self) -> None:
        await open_branch_picker(self)

    async def action_swipe(self, step: int) -> None:
        if self.turn_running:
            return
        chosen = await self.session.tree.select_swipe(step)
        if chosen is None:
            self.notify("The last reply has no other swipes. /regen makes one.", timeout=3)
            return
        group, index = await self.session.tree.swipes()
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
        for backend in self.owned_backends:
            try:
                await backend.aclose()
            except Exception:  # closing must never mask the real outcome
                log.warning("closing %s failed", backend.name, exc_info=True)


HISTORY_DEPTH = 400
"""Messages of the path read for Up's history (about half of them yours)."""
OTHER_WRITERS_INTERVAL = 1.0
"""Seconds between checks for another window writing in the same chat."""
FIRST_RUN_DELAY = 0.5
"""Seconds after mounting before the first-run offer imports its parts and probes."""
