"""One message in the transcript: who, when, and the text as Markdown.

Roleplay `*actions*` are Markdown emphasis, so they render in italics.
Streaming text is buffered and flushed on a timer, at most ~20 times a second
and less while you type (`pacing`: every redraw delays your keys), then
rendered once in full at the end. A timer means a pause in the stream never
leaves text stuck in the buffer.

A message can take the focus ("message selection", entered from the chat with
Ctrl+Up): its keys move the focus (`Move`, which the transcript answers) and
ask for an action on it (`Act`, which the app answers). Each key has a binding
id (`message.*`), so `[ui] keymap` can move it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from time import monotonic
from typing import Literal

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message as UIMessage
from textual.timer import Timer
from textual.widgets import Markdown, Static
from textual.widgets.markdown import MarkdownStream

from omoide.domain.chat import Message, MessageStatus, Role
from omoide.safe_text import inert
from omoide.tui.widgets import pacing
from omoide.tui.widgets.portrait import Portrait
from omoide.tui.widgets.text import chat_markdown

SPEAKER_PORTRAIT = (6, 3)
"""A speaker's portrait beside their reply in a scene, in cells (6 x 6 pixels)."""


def when(moment: datetime) -> str:
    """A message's short local timestamp (snapshot tests pin it)."""
    return moment.astimezone().strftime("%m/%d %H:%M")


Action = Literal["edit", "delete", "regenerate", "copy", "branch", "leave"]


class MessageView(Vertical):
    DEFAULT_CSS = """
    MessageView { height: auto; margin: 0 0 1 0; padding: 0 1; }
    MessageView.user { border-left: thick $accent; }
    MessageView.assistant { border-left: thick $success; }
    MessageView.interrupted { border-left: thick $warning; }
    MessageView .meta { color: $text-muted; height: 1; }
    MessageView Markdown { margin: 0; padding: 0; }
    MessageView .with-portrait { height: auto; }
    MessageView .with-portrait > Vertical { height: auto; }
    MessageView Portrait { margin: 0 1 0 0; }
    /* The picked message (Ctrl+Up) must stand out in every theme: $boost is a shade too faint to see. */
    MessageView:focus { background: $accent 25%; border-left: thick $foreground; }
    /* A code line longer than the pane wraps: Textual's fence scrolls sideways with no scrollbar, which cut it. */
    MessageView MarkdownFence { overflow-x: hidden; }
    MessageView MarkdownFence > Label { width: 1fr; text-wrap: wrap; text-overflow: fold; }
    """

    BINDINGS = [
        Binding("up,k", "move(-1)", "Selected message: the one above", id="message.previous"),
        Binding("down,j", "move(1)", "Selected message: the one below", id="message.next"),
        Binding("e", "act('edit')", "Selected message: edit it (a new version; the old one is kept)", id="message.edit"),
        Binding("d,delete", "act('delete')", "Selected message: delete it and what follows (kept on a branch)", id="message.delete"),
        Binding("r", "act('regenerate')", "Selected message: regenerate from it", id="message.regenerate"),
        Binding("c", "act('copy')", "Selected message: copy it", id="message.copy"),
        Binding("b", "act('branch')", "Selected message: start a branch from it", id="message.branch"),
        Binding("escape", "act('leave')", "Selected message: back to the composer", id="message.leave"),
    ]

    class Move(UIMessage):
        """Focus the message `step` places away (the transcript answers)."""

        def __init__(self, view: MessageView, step: int) -> None:
            super().__init__()
            self.view = view
            self.step = step

    class Act(UIMessage):
        """An action asked for on the focused message (the app answers)."""

        def __init__(self, view: MessageView, action: Action) -> None:
            super().__init__()
            self.view = view
            self.action = action

    def select(self) -> None:
        """Take the focus. A message is focusable only while selected, so a click
        or Tab never leaves your typing to the message keys ('d' deletes)."""
        self.can_focus = True
        self.focus()

    def on_blur(self) -> None:
        self.can_focus = False

    def action_move(self, step: int) -> None:
        self.post_message(self.Move(self, step))

    def action_act(self, action: Action) -> None:
        self.post_message(self.Act(self, action))

    def __init__(self, message: Message, speaker: str, *, user_name: str, live: bool = False,
                 portrait: Path | None = None, display: Callable[[Message], str] | None = None) -> None:
        role = "user" if message.role is Role.USER else "assistant"
        super().__init__(classes=role, id=f"msg-{message.id}")
        self.message = message
        self.speaker = user_name if message.role is Role.USER else speaker
        self.text = message.content
        self.live = live
        """True while the reply is streaming into this view."""
        self.portrait = portrait
        """The speaker's portrait file, drawn small at the left (a scene's replies)."""
        self._shown_by = display
        self.shown = self._shown_text()
        """The text as shown: the stored text through the card's regex scripts (display)."""
        self._pending: list[str] = []
        self._stream: MarkdownStream | None = None
        self._flusher: Timer | None = None
        self._shown_at = float("-inf")
        self.swipe: tuple[int, int] | None = None
        """(which, of how many) of its swipes this reply is, shown in its header; None: no swipes."""
        self.set_class(self._interrupted, "interrupted")

    def compose(self) -> ComposeResult:
        if self.portrait is None:
            yield Static(self._meta(), classes="meta", markup=False)
            yield Markdown(inert(self.shown), parser_factory=chat_markdown)
            return
        with Horizontal(classes="with-portrait"):
            yield Portrait(*SPEAKER_PORTRAIT)
            with Vertical():
                yield Static(self._meta(), classes="meta", markup=False)
                yield Markdown(inert(self.shown), parser_factory=chat_markdown)

    def on_mount(self) -> None:
        if self.portrait is not None:
            self.query_one(Portrait).show(self.portrait)

    def _shown_text(self) -> str:
        if self._shown_by is None or self.live:
            return self.text
        return self._shown_by(replace(self.message, content=self.text))

    async def reshow(self) -> None:
        """Show the text again: its place from the newest message (what regex scripts read) moved."""
        shown = self._shown_text()
        if shown != self.shown and self.is_attached and not self.live:
            self.shown = shown
            await self.query_one(Markdown).update(inert(shown))

    @property
    def _interrupted(self) -> bool:
        # A row still marked streaming that is not live here was cut off (a crash, another process).
        status = self.message.status
        return status is MessageStatus.INTERRUPTED or (status is MessageStatus.STREAMING and not self.live)

    def _meta(self) -> str:
        if self.live:
            mark = "  writing…"
        elif self.message.status is MessageStatus.FAILED:
            mark = "  (failed)"
        elif self._interrupted:
            mark = "  (interrupted)"
        else:
            mark = ""
        if self.swipe is not None and not self.live:
            mark += f"  ‹ {self.swipe[0]}/{self.swipe[1]} ›"
        return inert(f"{self.speaker} · {when(self.message.created_at)}{mark}")

    @property
    def meta(self) -> str:
        """The header line as shown: speaker, time and any mark."""
        return self._meta()

    def _show_meta(self) -> None:
        self.set_class(self._interrupted, "interrupted")
        if self.is_mounted:
            self.query_one(".meta", Static).update(self._meta())

    def show_swipe(self, place: tuple[int, int] | None) -> None:
        """Show which of its swipes this reply is (Ctrl+Left/Right page through them)."""
        if place != self.swipe:
            self.swipe = place
            self._show_meta()

    def append(self, text: str) -> None:
        """Buffer streamed text; the flusher shows it when `pacing` allows."""
        self.text += text
        self._pending.append(text)
        self._schedule()

    def _schedule(self) -> None:
        if self._flusher is None and self.live:
            self._flusher = self.set_timer(pacing.next_check(self._shown_at), self._flush)

    async def _flush(self) -> None:
        self._flusher = None
        if not self._pending or not self.live:
            return
        if pacing.hold_for(self._shown_at) > 0:  # you are typing: wait for your key to show
            self._flusher = self.set_timer(pacing.next_check(self._shown_at), self._flush)
            return
        self._shown_at = monotonic()
        if self._stream is None:
            # Created here, right before its first write: that write yields, so the stream's
            # task starts. Stopping a task that never started raises CancelledError in the
            # awaiting handler, which would end the app's message loop.
            self._stream = Markdown.get_stream(self.query_one(Markdown))
        chunk, self._pending = "".join(self._pending), []
        await self._stream.write(inert(chunk))
        if self._pending:
            self._schedule()

    async def finish(self, message: Message | None = None, *, interrupted: bool = False) -> None:
        """End streaming and render the final text once, in full."""
        if self._flusher is not None:
            self._flusher.stop()
            self._flusher = None
        stream, self._stream = self._stream, None
        if stream is not None:
            await stream.stop()
        self._pending = []
        self.live = False
        if not self.is_attached:
            return
        if message is not None:
            self.message = message
            self.text = message.content
        elif interrupted:
            self.message = replace(self.message, status=MessageStatus.INTERRUPTED)
        self.shown = self._shown_text()
        await self.query_one(Markdown).update(inert(self.shown))
        self._show_meta()
