"""`/models`: every model you could chat with, and the recommended ones to
download. Enter on a model switches to it (and makes it the default, as
`omoide models use` does); Enter on a recommended one downloads it in the
background, with its progress here and above the status bar, and switches
when it is whole. Servers found on this machine are listed once they answer.
Every name is shown inert: a server's model name is untrusted text."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, ProgressBar, Static
from textual.widgets.option_list import Option

from omoide.tui.command_line import ParsedCommand
from omoide.errors import OmoideError
from omoide.models import choose
from omoide.models.catalog import RECOMMENDED, Recommended, downloaded
from omoide.models.offer import offer_for
from omoide.safe_text import oneline
from omoide.tui.download import DownloadState, Downloads
from omoide.tui.screens.characters import fit_list
from omoide.tui.host import Host

Row = choose.ModelChoice | Recommended


def choice_label(choice: choose.ModelChoice, current: bool) -> Text:
    mark = "● " if current else "  "
    style = "" if choice.available else "dim"
    return Text.assemble(mark, (oneline(choice.name, 60), f"bold {style}".strip()), (f"  {choice.kind} · ", "dim"),
                         (oneline(choice.detail, 120), style))


def recommended_label(model: Recommended) -> Text:
    offer = offer_for(model)
    return Text.assemble("⇩ ", (model.name, "bold"), ("  download · ", "dim"),
                         f"{model.size}, needs {model.ram} of RAM, {model.licence}, {offer.pace()} here · ",
                         (model.note, "italic"))


LIST_ROWS = 18
"""The most rows the list takes; fewer on a short terminal (fit_list)."""
AROUND_LIST = 10
"""Rows the box needs besides its list: border, title, the download line and bar, the keys."""


class ModelsScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    ModelsScreen { align: center middle; }
    ModelsScreen > Vertical { width: 95%; max-width: 130; height: auto; max-height: 90%; border: round $accent; background: $surface; padding: 0 1; }
    ModelsScreen .title { text-style: bold; }
    ModelsScreen OptionList { height: auto; max-height: 18; margin: 1 0 0 0; }  /* LIST_ROWS */
    ModelsScreen #models-download { height: auto; margin-top: 1; }
    ModelsScreen ProgressBar { margin-bottom: 1; }
    ModelsScreen .hint { color: $text-muted; }
    """
    BINDINGS = [Binding("escape", "close", "Close", id="models.close")]

    def __init__(self, host: Host) -> None:
        super().__init__()
        self.host = host
        self.rows: list[Row] = []
        self.servers: list[choose.ModelChoice] | None = None
        self.chosen: choose.ModelChoice | None = None
        """The model switched to here (the settings still name the one the chat started with)."""

    @property
    def downloads(self) -> Downloads:
        return self.host.downloads

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static("Models", classes="title", markup=False)
            yield OptionList(id="models")
            yield Static("", id="models-download", markup=False)
            yield ProgressBar(total=None, show_eta=False, id="models-progress")
            yield Static("Enter: use the model (or download it; it is used once whole) · Esc: close", classes="hint", markup=False)

    def on_mount(self) -> None:
        self.fill()
        self.downloads.subscribe(self.show_download)
        settings = self.host.session.settings
        if settings.models.discover_servers != [] or settings.backend.base_url:
            self.run_worker(self._discover(), group="models-discovery", exclusive=True, exit_on_error=False)
        else:
            self.servers = []

    def on_unmount(self) -> None:
        self.downloads.unsubscribe(self.show_download)

    def on_resize(self) -> None:
        fit_list(self.query_one(OptionList), self.size.height, LIST_ROWS, AROUND_LIST)

    async def _discover(self) -> None:
        from omoide.llm.served import list_servers

        servers, _ = await list_servers(self.host.session.settings)
        self.servers = choose.server_choices(servers)
        self.fill()

    def fill(self) -> None:
        settings = self.host.session.settings
        have = {p.name for p in downloaded()}
        choices = choose.local_choices() + (self.servers or [])
        wanted = [m for m in RECOMMENDED if m.file not in have]
        self.rows = [*choices, *wanted]
        options = self.query_one(OptionList)
        highlighted = options.highlighted
        options.clear_options()
        def current(c: choose.ModelChoice) -> bool:
            return c == self.chosen if self.chosen is not None else choose.is_current(c, settings)

        options.add_options([Option(choice_label(c, current(c)), id=f"m{i}") for i, c in enumerate(choices)])
        if self.servers is None:
            options.add_option(Option(Text("  looking for model servers on this machine…", style="dim italic"), disabled=True))
        options.add_options([Option(recommended_label(m), id=f"m{len(choices) + i}") for i, m in enumerate(wanted)])
        options.highlighted = highlighted if highlighted is not None and highlighted < options.option_count else 0
        options.focus()

    def show_download(self, state: DownloadState) -> None:
        self.query_one("#models-download", Static).update(Text(state.line()))
        bar = self.query_one(ProgressBar)
        bar.display = state.phase in ("running", "retrying")
        bar.update(total=state.total, progress=state.done)
        if state.phase == "done":
            self.fill()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        if event.option.id is None:
            return
        row = self.rows[int(event.option.id[1:])]
        if isinstance(row, Recommended):
            self.downloads.start(row)
            return
        try:
            chosen = choose.pick(row.name, [row], row.base_url)
            saved = choose.make_default(chosen)
            from omoide.llm.factory import make_backend

            self.host.use_backend(make_backend(chosen.settings(self.host.session.settings)))
        except OmoideError as exc:
            self.app.notify(f"{exc.message} {exc.hint}".strip(), severity="error", timeout=10)
            return
        self.chosen = row
        self.app.notify(f"Chatting with {row.name} from the next reply on (the default now, in {saved}).", timeout=6)
        self.fill()

    def action_close(self) -> None:
        self.dismiss(None)


async def models_command(app: Host, command: ParsedCommand) -> None:
    app.push_screen(ModelsScreen(app))
