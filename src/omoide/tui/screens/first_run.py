"""The first-run screen: who you are, who to talk to, and a real model.

`start_first_run(app)` is the app's one hook (called just after the chat is on
screen). The first time omoide runs (`welcomed` is not set) it asks your name
(the profile's, the one name the characters use), offers the characters (the
highlighted one's portrait beside them), and offers a model: the models of a server running on this machine when one
answers, else the recommended model that suits this machine (name, size, RAM,
licence, the speed to expect), downloaded in the background while you chat.
Esc keeps the defaults; either way the welcome is not shown again. Later
starts offer a server found on this machine while no model has been chosen
(once for this chat, as the default, or keep the embedded model: saved, so
asked once); Esc there decides nothing and the offer comes again next time.

Every label is a rich `Text` (a server's model name is untrusted: controls
are shown inert, `[/]` is text, never markup).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, cast

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widget import Widget
from textual.widgets import Button, Input, OptionList, Static

from omoide.tui.widgets.inert import InertInput
from textual.widgets.option_list import Option

from omoide.characters.library import Library
from omoide.characters.model import Character
from omoide.domain.library import IndexedCard
from omoide.config.file import update_config
from omoide.errors import OmoideError
from omoide.world.identity import DEFAULT_NAME, clean_name
from omoide.models import choose
from omoide.models.catalog import Recommended
from omoide.models.offer import Offer, recommend
from omoide.safe_text import oneline
from omoide.tui.host import Host
from omoide.tui.screens.characters import character_options, show_portrait
from omoide.tui.typeahead import Held, TypeAhead, type_into_line
from omoide.tui.widgets.portrait import Portrait

FIRST_RUN_PORTRAIT = (16, 8)
"""The portrait's size in cells beside the characters (as tall as their list may be)."""

Decision = Literal["once", "default", "keep", "download", "start"]


@dataclass(frozen=True, slots=True)
class Welcome:
    """The first-run part of the screen: your name and the characters."""

    name: str
    characters: list[IndexedCard]
    """Named from the library's index: the card of the one chosen is read when it is chosen."""
    current: str
    library: Library
    portraits: bool = True
    """Show the highlighted character's portrait beside the list (`[ui] portraits`)."""


@dataclass(frozen=True, slots=True)
class FirstRunResult:
    decision: Decision
    choice: choose.ModelChoice | None = None
    name: str | None = None
    """The name typed (None: not asked, or left empty)."""
    character: Character | None = None
    """The character picked (None: not asked)."""
    model: Recommended | None = None
    """The recommended model to download ("download")."""


def model_label(choice: choose.ModelChoice) -> Text:
    """A server's model as an option: its name and where it runs, inert."""
    return Text.assemble((oneline(choice.name, 80), "bold"), ("  ·  ", "dim"), oneline(choice.detail, 80))


class FirstRunScreen(ModalScreen[FirstRunResult | None]):
    DEFAULT_CSS = """
    FirstRunScreen { align: center middle; }
    FirstRunScreen > VerticalScroll { width: 90%; max-width: 100; height: auto; max-height: 95%; border: round $accent; background: $surface; padding: 0 2; }
    FirstRunScreen .title { text-style: bold; }
    FirstRunScreen .section { margin-top: 1; }
    FirstRunScreen Input { margin: 0 0 1 0; }
    FirstRunScreen OptionList { height: auto; max-height: 8; margin: 0 0 1 0; }
    FirstRunScreen #first-run-cast OptionList { width: 1fr; }
    FirstRunScreen Portrait { margin: 0 0 1 1; }
    FirstRunScreen Horizontal { height: auto; }
    FirstRunScreen Button { margin-right: 1; }
    FirstRunScreen .hint { color: $text-muted; }
    """
    BINDINGS = [Binding("escape", "later", "Keep the defaults", id="first_run.later")]

    def __init__(self, choices: list[choose.ModelChoice], embedded: str, *,
                 welcome: Welcome | None = None, offer: Offer | None = None, probing: bool = False,
                 typed_ahead: TypeAhead | None = None) -> None:
        super().__init__()
        self.choices = choices
        self.embedded = embedded
        self.welcome = welcome
        self.offer = offer if not choices else None
        self.probing = probing
        """The servers are still being looked for: `show_models` brings what they offer."""
        self.typed_ahead = typed_ahead
        """Holds the keys typed before the screen was up: the name field takes them, up to the first Enter."""
        self.after: Held = []
        """The keys typed ahead after that first Enter: the composer's once the welcome is answered."""

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            if self.welcome is not None:
                yield from self._compose_welcome(self.welcome)
            with Vertical(id="first-run-model"):
                yield from self._model_part()
            later = "keep the defaults" if self.welcome is not None else "decide later"
            yield Static(f"Esc: {later}. Switch later with /models, or omoide models use NAME.", classes="hint", markup=False)

    def _model_part(self) -> list[Widget]:
        """The model offer: a server's models, a model to download, or (while the
        servers are still being looked for, or when there is nothing to offer) a start."""
        if self.choices:
            return [
                Static("A model server is running on this machine", classes="title section" if self.welcome else "title", markup=False),
                Static(Text(f"You are chatting with the small embedded model ({oneline(self.embedded, 60)}). "
                            "A model on your own server will tell far better stories. Pick one:")),
                OptionList(*(Option(model_label(c), id=str(i)) for i, c in enumerate(self.choices)), id="first-run-models"),
                Horizontal(Button("Use it for this chat", id="once", variant="primary"),
                           Button("Make it the default", id="default", variant="success"),
                           Button("Keep the embedded model", id="keep")),
            ]
        if self.offer is not None:
            return [
                Static("A real model", classes="title section", markup=False),
                Static(Text(f"You are chatting with a small demo model ({oneline(self.embedded, 60)}): it forgets "
                            "and repeats itself. No model server answered here; this model suits this machine:")),
                Static(Text("\n".join(self.offer.describe()), style="bold"), id="first-run-offer"),
                Horizontal(Button("Download it while I chat", id="download", variant="primary"),
                           Button("Keep the demo model", id="keep")),
            ]
        looking = [Static("Looking for a model server on this machine…", classes="hint section", id="first-run-looking",
                          markup=False)] if self.probing else []
        return [*looking, Horizontal(Button("Start chatting", id="start", variant="primary"))]

    async def show_models(self, choices: list[choose.ModelChoice], offer: Offer | None) -> None:
        """The servers were looked for: offer what they found (or the download) in place of the start."""
        self.probing = False
        self.choices, self.offer = choices, (offer if not choices else None)
        part = self.query_one("#first-run-model", Vertical)
        moving = part in (self.focused.ancestors if self.focused is not None else [])
        await part.remove_children()
        await part.mount_all(self._model_part())
        if self.choices:
            self.query_one("#first-run-models", OptionList).highlighted = 0
        if moving:  # the focus was on the start button, now gone
            self.query_one("#first-run-model Button", Button).focus()

    def _compose_welcome(self, welcome: Welcome) -> ComposeResult:
        yield Static("Welcome to omoide", classes="title", markup=False)
        yield Static("What should the characters call you?", markup=False)
        yield InertInput(value="" if welcome.name == DEFAULT_NAME else welcome.name, placeholder="Your name", id="first-run-name")
        yield Static("Who would you like to talk to? (Ctrl+T or /characters shows them again.)", markup=False)
        with Horizontal(id="first-run-cast"):
            yield OptionList(*character_options(welcome.characters, welcome.name, None), id="first-run-characters")
            yield Portrait(*FIRST_RUN_PORTRAIT, id="first-run-portrait")

    def on_mount(self) -> None:
        # Said on the border, so it is in sight when the box is taller than the screen (80x24).
        leave = "Esc keeps the defaults" if self.welcome is not None else "Esc: decide later"
        self.query_one(VerticalScroll).border_subtitle = f"Tab moves on · {leave}"
        if self.welcome is not None:
            characters = self.query_one("#first-run-characters", OptionList)
            ids = [c.id for c in self.welcome.characters]
            characters.highlighted = ids.index(self.welcome.current) if self.welcome.current in ids else None
            name = self.query_one("#first-run-name", Input)
            held = self.typed_ahead.release() if self.typed_ahead else []
            if held:
                name.select_on_focus = False  # what you typed is not replaced by the next key
            entered, self.after = type_into_line(name, held)
            (characters if entered else name).focus()
        elif self.choices:
            models = self.query_one("#first-run-models", OptionList)
            models.highlighted = 0
            models.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.query_one("#first-run-characters", OptionList).focus()

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if event.option_list.id == "first-run-characters" and self.welcome is not None:
            show_portrait(self.query_one(Portrait), self.welcome.characters, event.option.id, enabled=self.welcome.portraits)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        if event.option_list.id == "first-run-characters" and self.choices:
            self.query_one("#first-run-models", OptionList).focus()
        else:
            self.query_one(Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        decision: Decision = event.button.id  # type: ignore[assignment]
        name = character = None
        if self.welcome is not None:
            typed = self.query_one("#first-run-name", Input).value
            if typed.strip():
                try:
                    name = clean_name(typed)
                except OmoideError as exc:
                    self.app.notify(f"{exc.message} {exc.hint}", severity="warning")
                    self.query_one("#first-run-name", Input).focus()
                    return
            index = self.query_one("#first-run-characters", OptionList).highlighted
            entry = self.welcome.characters[index] if index is not None and self.welcome.characters else None
            character = self.welcome.library.load(entry.id) if entry is not None else None
        choice = None
        if decision in ("once", "default"):
            choice = self.choices[self.query_one("#first-run-models", OptionList).highlighted or 0]
        model = self.offer.model if decision == "download" and self.offer is not None else None
        self.dismiss(FirstRunResult(decision, choice, name, character, model))

    def action_later(self) -> None:
        """Esc keeps the defaults, but not at the cost of a name already typed."""
        typed = self.query_one("#first-run-name", Input).value.strip() if self.welcome is not None else ""
        if not typed:
            self.dismiss(None)
            return
        try:
            name = clean_name(typed)
        except OmoideError:
            self.dismiss(None)  # the notice after says how to set it
            return
        self.dismiss(FirstRunResult("start", name=name))


def start_first_run(app: Host) -> None:
    """The first run's welcome at once (keys typed meanwhile wait for it); on later
    starts, the offer of a server found here, once it answers."""
    settings = app.session.settings
    probe = choose.needs_first_run(settings) and settings.models.discover_servers != []
    if not settings.ui.welcomed:
        _welcome(app, probe=probe)
    elif probe:
        cast(App[Any], app).run_worker(_offer(app), group="first-run", exit_on_error=False)


def _welcome(app: Host, *, probe: bool) -> None:
    session = app.session
    greet = Welcome(session.user.name, session.library.entries(), session.character.id, session.library,
                    portraits=session.settings.ui.portraits)
    offer = recommend() if not probe and choose.needs_first_run(session.settings) else None
    screen = FirstRunScreen([], session.backend.model, welcome=greet, offer=offer, probing=probe,
                            typed_ahead=app.typeahead)

    async def apply(result: FirstRunResult | None) -> None:
        try:
            await _apply(app, result, welcomed=True)
        finally:
            await app.type_ahead(screen.after)  # now under the name given

    app.push_screen(screen, apply)
    if probe:
        cast(App[Any], app).run_worker(_probe(app, screen), group="first-run", exit_on_error=False)


async def _probe(app: Host, screen: FirstRunScreen) -> None:
    """The welcome is up: look for servers, and offer what answers (or a download) on it,
    or on a screen of its own if the welcome was answered first."""
    session = app.session
    choices = choose.server_choices(await choose.find_servers(session.settings))
    offer = recommend() if not choices and choose.needs_first_run(session.settings) else None
    if screen.is_attached and cast(App[Any], app).screen is screen:
        await screen.show_models(choices, offer)
    elif choices or offer is not None:
        await _push_offer(app, choices, offer)


async def _offer(app: Host) -> None:
    choices = choose.server_choices(await choose.find_servers(app.session.settings))
    if choices:
        await _push_offer(app, choices, None)


async def _push_offer(app: Host, choices: list[choose.ModelChoice], offer: Offer | None) -> None:
    async def apply(result: FirstRunResult | None) -> None:
        await _apply(app, result, welcomed=False)

    app.push_screen(FirstRunScreen(choices, app.session.backend.model, offer=offer), apply)


async def _apply(app: Host, result: FirstRunResult | None, *, welcomed: bool) -> None:
    try:
        if welcomed:
            update_config({"welcomed": True})  # once, whatever was answered
        if result is None:
            if welcomed and app.session.user.name == DEFAULT_NAME:
                app.notify(f"The characters call you \u201c{DEFAULT_NAME}\u201d. /profile sets your name whenever you like.",
                           title="Your name", timeout=8)
            return
        if result.name is not None and result.name != app.session.user.name:
            await app.rename_user(result.name)
        if result.character is not None and result.character.id != app.session.character.id:
            await app.switch_character(result.character)
        if result.decision == "keep":
            path = choose.keep_embedded()
            app.notify(f"Keeping the embedded model (saved in {path}).", timeout=5)
        elif result.decision == "download" and result.model is not None:
            app.downloads.start(result.model)
        elif result.decision in ("once", "default") and result.choice is not None:
            saved = f" and made it the default in {choose.make_default(result.choice)}" if result.decision == "default" else ""
            from omoide.llm.factory import make_backend

            app.use_backend(make_backend(result.choice.settings(app.session.settings)))
            app.notify(f"Chatting with {result.choice.name} on {result.choice.base_url}{saved}.", timeout=6)
    except OmoideError as exc:
        app.notify(f"{exc.message} {exc.hint}".strip(), severity="error", timeout=10)
