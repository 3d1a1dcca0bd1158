"""The line above the status bar while a model downloads (or its download failed)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import ProgressBar, Static

from omoide.safe_text import inert


class _State(Protocol):
    """What the bar shows of a download (tui/download.DownloadState)."""

    @property
    def phase(self) -> str: ...

    @property
    def done(self) -> int: ...

    @property
    def total(self) -> int | None: ...

    def line(self) -> str: ...


class _Downloads(Protocol):
    """Who to watch (tui/download.Downloads): the bar never imports it, which imports the bar."""

    def subscribe(self, listener: Callable[[Any], None]) -> None: ...

    def unsubscribe(self, listener: Callable[[Any], None]) -> None: ...


class DownloadBar(Horizontal):
    """A line above the status bar while a model downloads (or its download failed)."""

    DEFAULT_CSS = """
    DownloadBar { height: 1; display: none; padding: 0 1; background: $panel; }
    DownloadBar.shown { display: block; }
    DownloadBar #download-text { width: 1fr; height: 1; color: $text-muted; }
    DownloadBar ProgressBar { width: 36; height: 1; }
    """

    def __init__(self, downloads: _Downloads) -> None:
        super().__init__(id="download")
        self.downloads = downloads

    def compose(self) -> ComposeResult:
        yield Static("", id="download-text", markup=False)
        yield ProgressBar(total=None, show_eta=False, id="download-progress")

    def on_mount(self) -> None:
        self.downloads.subscribe(self.show)

    def on_unmount(self) -> None:
        self.downloads.unsubscribe(self.show)

    def show(self, state: _State) -> None:
        self.set_class(state.phase in ("running", "retrying", "failed"), "shown")
        self.query_one("#download-text", Static).update(Text(inert(state.line()), no_wrap=True, overflow="ellipsis"))
        bar = self.query_one(ProgressBar)
        # Failed: no bar. One with no total would go on animating as if the download were running.
        bar.display = state.phase in ("running", "retrying")
        bar.update(total=state.total, progress=state.done)
