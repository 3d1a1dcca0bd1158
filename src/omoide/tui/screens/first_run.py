"""The first-run offer: a model server is running here and nothing is configured.

`start_first_run(app)` is the app's one hook (called on mount). When the
settings name no backend, it looks for local servers in a background worker,
so the chat is on screen and usable at once; if one answers with a model, it
offers: use it for this chat, make it the default (saved in config.toml), or
keep the embedded model (saved too, so the question is asked once). Escape
decides nothing and the offer comes again next time.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Protocol, cast

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widget import Widget
from textual.widgets import Button, OptionList, Static
from textual.widgets.option_list import Option

from omoide.errors import OmoideError
from omoide.llm.base import Backend
from omoide.models import choose
from omoide.chat.session import ChatSession

Decision = Literal["once", "default", "keep"]


@dataclass(frozen=True, slots=True)
class FirstRunResult:
    decision: Decision
    choice: choose.ModelChoice | None = None


class FirstRunScreen(ModalScreen[FirstRunResult | None]):
    DEFAULT_CSS = """
    FirstRunScreen { align: center middle; }
    FirstRunScreen > Vertical { width: 90%; max-width: 100; height: auto; max-height: 90%; border: round $accent; background: $surface; padding: 1 2; }
    FirstRunScreen OptionList { height: auto; max-height: 12; margin: 1 0; }
    FirstRunScreen Horizontal { height: auto; }
    FirstRunScreen Button { margin-right: 1; }
    FirstRunScreen .hint { color: $text-muted; }
    """
    BINDINGS = [Binding("escape", "later", "Decide later", id="first_run.later")]

    def __init__(self, choices: list[choose.ModelChoice], embedded: str) -> None:
        super().__init__()
        self.choices = choices
        self.embedded = embedded

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static("A model server is running on this machine", classes="title", markup=False)
            yield Static(
                f"You are chatting with the small embedded model ({self.embedded}). "
                "A model on your own server will tell far better stories. Pick one:",
                markup=False,
            )
            yield OptionList(*(Option(f"{c.name}  ·  {c.detail}", id=str(i)) for i, c in enumerate(self.choices)), id="first-run-models")
            with Horizontal():
                yield Button("Use it for this chat", id="once", variant="primary")
                yield Button("Make it the default", id="default", variant="success")
                yield Button("Keep the embedded model", id="keep")
            yield Static("Esc: decide later. `omoide models` lists every model; `omoide models use NAME` switches.", classes="hint", markup=False)

    def on_mount(self) -> None:
        models = self.query_one(OptionList)
        models.highlighted = 0
        models.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.query_one("#once", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        decision: Decision = event.button.id  # type: ignore[assignment]
        if decision == "keep":
            self.dismiss(FirstRunResult("keep"))
            return
        index = self.query_one(OptionList).highlighted or 0
        self.dismiss(FirstRunResult(decision, self.choices[index]))

    def action_later(self) -> None:
        self.dismiss(None)


class _BackendOwner(Widget):
    """Closes a backend the offer opened when the app shuts down."""

    DEFAULT_CSS = "_BackendOwner { display: none; }"

    def __init__(self, backend: Backend) -> None:
        super().__init__()
        self.backend = backend

    async def on_unmount(self) -> None:
        try:
            await self.backend.aclose()
        except Exception:  # closing must never mask the real outcome
            pass


class _WithSession(Protocol):
    session: ChatSession


def _session(app: App[Any]) -> ChatSession:
    """The app's current session (it changes when another chat is opened)."""
    return cast(_WithSession, app).session


def start_first_run(app: App[Any]) -> None:
    settings = _session(app).settings
    if choose.needs_first_run(settings) and settings.models.discover_servers != []:
        app.run_worker(_offer(app), group="first-run", exit_on_error=False)


async def _offer(app: App[Any]) -> None:
    servers = await choose.find_servers(_session(app).settings)
    choices = choose.server_choices(servers)
    if not choices:
        return
    app.push_screen(FirstRunScreen(choices, _session(app).backend.model), lambda result: _apply(app, result))


def _apply(app: App[Any], result: FirstRunResult | None) -> None:
    if result is None:
        return
    try:
        if result.decision == "keep":
            path = choose.keep_embedded()
            app.notify(f"Keeping the embedded model (saved in {path}).", timeout=5)
            return
        assert result.choice is not None
        saved = f" and made it the default in {choose.make_default(result.choice)}" if result.decision == "default" else ""
        _switch(app, result.choice)
        app.notify(f"Chatting with {result.choice.name} on {result.choice.base_url}{saved}.", timeout=6)
    except OmoideError as exc:
        app.notify(f"{exc.message} {exc.hint}".strip(), severity="error", timeout=10)


def _switch(app: App[Any], choice: choose.ModelChoice) -> None:
    from omoide.llm.factory import make_backend
    from omoide.tui.widgets.status import StatusBar

    session = _session(app)
    backend = make_backend(choice.settings(session.settings))
    app.screen_stack[0].mount(_BackendOwner(backend))
    session.use_backend(backend)
    app.query_one(StatusBar).backend = f"{backend.name} · {backend.model}"
