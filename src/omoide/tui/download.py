"""A recommended model, downloaded in the background while you chat.

`Downloads` runs `omoide.models.pull` in a worker: its progress shows in the
`DownloadBar` (widgets/download_bar.py) above the status bar (and in /models), a connection that drops
is resumed from the .part file (a few times, waiting a little longer each
time), the file is checked as `pull` checks it (GGUF's magic number, the size
announced, the SHA-256 Hugging Face announces), and once it is whole the chat
switches to it and config.toml makes it the default. A download cut off by
quitting resumes at the next start, while no model has been chosen.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal, Protocol, cast

from typing import TYPE_CHECKING

from textual.app import App

from omoide.errors import OmoideError
from omoide.llm.base import Backend
from omoide.chat.session import ChatSession

if TYPE_CHECKING:
    from omoide.models.catalog import Recommended

log = logging.getLogger(__name__)

RETRIES = 4
"""Resumes after a dropped connection before the download is given up (and can be started again)."""
RETRY_WAIT = 1.0
"""Seconds before the first resume; each next one waits twice as long."""
SHOW_EVERY = 0.1
"""Seconds between two progress updates on screen."""

Phase = Literal["idle", "running", "retrying", "failed", "done"]


@dataclass(frozen=True, slots=True)
class DownloadState:
    phase: Phase = "idle"
    model: str = ""
    done: int = 0
    total: int | None = None
    message: str = ""

    def line(self) -> str:
        size = f"{self.done / 1_048_576:,.0f} of {self.total / 1_048_576:,.0f} MiB" if self.total else f"{self.done / 1_048_576:,.0f} MiB"
        match self.phase:
            case "running":
                return f"Downloading {self.model}: {size}; keep chatting, it switches when ready."
            case "retrying":
                return f"Downloading {self.model}: the connection dropped at {size}; resuming… ({self.message})"
            case "failed":
                # The cause as pull says it (which may already name the download), then what to do here:
                # pull's own hints speak of the command line ("run the same command again").
                said = self.message if self.message.startswith("The download of") else f"The download of {self.model} failed: {self.message}"
                return f"{said} To try again: /models, then Enter on {self.model}."
            case "done":
                return f"{self.model} is downloaded and in use."
        return ""


class _Host(Protocol):
    session: ChatSession

    def use_backend(self, backend: Backend) -> None: ...


def part_file(model: Recommended) -> Path:
    from omoide.models.catalog import models_dir
    from omoide.models.pull import resolve

    return models_dir() / (resolve(model.name).filename + ".part")


class Downloads:
    """The app's one background download, and who is watching it."""

    def __init__(self, app: App[Any]) -> None:
        self._app = app
        self.state = DownloadState()
        self._listeners: list[Callable[[DownloadState], None]] = []
        self._shown_at = 0.0

    def subscribe(self, listener: Callable[[DownloadState], None]) -> None:
        self._listeners.append(listener)
        listener(self.state)

    def unsubscribe(self, listener: Callable[[DownloadState], None]) -> None:
        if listener in self._listeners:
            self._listeners.remove(listener)

    @property
    def busy(self) -> bool:
        return self.state.phase in ("running", "retrying")

    def start(self, model: Recommended) -> None:
        """Download `model` in the background and switch to it when it is whole."""
        if self.busy:
            self._app.notify(f"{self.state.model} is still downloading; one download at a time.", severity="warning", timeout=5)
            return
        self._show_bar()
        self._set(DownloadState("running", model.name))
        self._app.run_worker(self._run(model), group="download", exclusive=True, exit_on_error=False)

    def resume_unfinished(self) -> None:
        """A recommended model's download cut off last time (the .part is there):
        go on with it, unless a model has been chosen meanwhile."""
        from omoide.models.choose import needs_first_run

        if self.busy or not needs_first_run(cast(_Host, self._app).session.settings):
            return
        from omoide.models.catalog import RECOMMENDED

        for model in RECOMMENDED:
            if part_file(model).exists():
                self._app.notify(f"Resuming the download of {model.name} where it stopped.", timeout=5)
                self.start(model)
                return

    async def _run(self, model: Recommended) -> None:
        from omoide.models.pull import pull

        deadline = cast(_Host, self._app).session.settings.models.pull_deadline
        for attempt in range(RETRIES + 1):
            try:
                path = await pull(model.name, progress=lambda done, total: self._progress(model.name, done, total),
                                  deadline=deadline)
                break
            except OmoideError as exc:
                if attempt < RETRIES and part_file(model).exists():  # cut off, and kept: resume it
                    self._set(replace(self.state, phase="retrying", message=f"try {attempt + 2} of {RETRIES + 1}"))
                    await asyncio.sleep(RETRY_WAIT * 2**attempt)
                    self._set(replace(self.state, phase="running", message=""))
                    continue
                self._fail(model, exc)
                return
        self._switch(model, path)

    def _fail(self, model: Recommended, exc: OmoideError) -> None:
        """Stop, say so once (the bar keeps saying it), and leave the cause in omoide.log."""
        log.warning("the download of %s failed: %s (%s)", model.name, exc.message, exc.__cause__ or exc)
        self._set(replace(self.state, phase="failed", message=exc.message))
        self._app.notify(self.state.line(), severity="error", title="Download", timeout=10)

    def _switch(self, model: Recommended, path: Path) -> None:
        from omoide.llm.factory import make_backend
        from omoide.models.choose import ModelChoice, make_default

        host = cast(_Host, self._app)
        choice = ModelChoice("downloaded", path.name, f"{model.name}, downloaded")
        try:
            saved = make_default(choice)
            host.use_backend(make_backend(choice.settings(host.session.settings)))
        except OmoideError as exc:
            self._fail(model, exc)
            return
        self._set(replace(self.state, phase="done", done=path.stat().st_size, total=path.stat().st_size))
        self._app.notify(f"{model.name} is ready: the next reply comes from it (the default now, in {saved}).",
                         title="Download", timeout=8)

    def _show_bar(self) -> None:
        """The bar above the status bar, mounted with the first download (its
        widgets are not worth importing at every start)."""
        from omoide.tui.widgets.download_bar import DownloadBar

        if not self._app.query(DownloadBar):
            self._app.screen_stack[0].mount(DownloadBar(self), before="#status")

    def _progress(self, name: str, done: int, total: int | None) -> None:
        self.state = replace(self.state, done=done, total=total)
        now = time.monotonic()
        if now - self._shown_at >= SHOW_EVERY or (total is not None and done >= total):
            self._shown_at = now
            self._set(self.state)

    def _set(self, state: DownloadState) -> None:
        self.state = state
        for listener in list(self._listeners):
            listener(state)
