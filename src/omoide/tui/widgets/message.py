"""One message in the transcript: who, when, and the text as Markdown.

Roleplay `*actions*` are Markdown emphasis, so they render in italics.
Streaming text is buffered and flushed at most ~20 times a second (the
Markdown widget cannot take more), then rendered once in full at the end.
"""

from __future__ import annotations

import time

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Markdown, Static

from omoide.domain import Message, MessageStatus, Role

FLUSH_INTERVAL = 0.05


class MessageView(Vertical):
    DEFAULT_CSS = """
    MessageView { height: auto; margin: 0 0 1 0; padding: 0 1; }
    MessageView.user { border-left: thick $accent; }
    MessageView.assistant { border-left: thick $success; }
    MessageView .meta { color: $text-muted; height: 1; }
    MessageView Markdown { margin: 0; padding: 0; }
    """

    def __init__(self, message: Message, speaker: str, *, user_name: str) -> None:
        role = "user" if message.role is Role.USER else "assistant"
        super().__init__(classes=role, id=f"msg-{message.id}")
        self.message = message
        self.speaker = user_name if message.role is Role.USER else speaker
        self.text = message.content
        self._pending: list[str] = []
        self._last_flush = 0.0
        self._stream = None

    def compose(self) -> ComposeResult:
        yield Static(self._meta(), classes="meta")
        yield Markdown(self.text)

    def _meta(self) -> str:
        when = self.message.created_at.astimezone().strftime("%m/%d %H:%M")
        mark = ""
        if self.message.status in (MessageStatus.INTERRUPTED, MessageStatus.STREAMING) and self.message.role is Role.ASSISTANT:
            mark = "  (interrupted)" if self.message.status is MessageStatus.INTERRUPTED or self._stream is None else "  …"
        if self.message.status is MessageStatus.FAILED:
            mark = "  (failed)"
        return f"{self.speaker} · {when}{mark}"

    def set_message(self, message: Message) -> None:
        self.message = message
        self.query_one(".meta", Static).update(self._meta())

    async def append(self, text: str) -> None:
        self.text += text
        self._pending.append(text)
        if self._stream is None:
            self._stream = Markdown.get_stream(self.query_one(Markdown))
        now = time.monotonic()
        if now - self._last_flush >= FLUSH_INTERVAL:
            self._last_flush = now
            chunk, self._pending = "".join(self._pending), []
            await self._stream.write(chunk)

    async def finish(self, message: Message | None = None, *, interrupted: bool = False) -> None:
        if self._stream is not None:
            await self._stream.stop()
            self._stream = None
        self._pending = []
        if message is not None:
            self.message = message
            self.text = message.content
        elif interrupted:
            self.message = _with_status(self.message, MessageStatus.INTERRUPTED)
        await self.query_one(Markdown).update(self.text)
        self.query_one(".meta", Static).update(self._meta())


def _with_status(message: Message, status: MessageStatus) -> Message:
    from dataclasses import replace

    return replace(message, status=status)
