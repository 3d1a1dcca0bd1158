"""`/help`: every command and key, readable in full at any size.

The commands and keys are rich tables in one scrolling view: the usage column
never wraps, the descriptions wrap to the width there is, so at 80x24 every
description is whole (scroll for the rest). The title sits in the border, so
there is no empty line above it; the view scrolls only downwards.
"""

from __future__ import annotations

from rich import box
from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from omoide.commands import specs


def help_tables(keys: list[tuple[str, str]]) -> Group:
    commands = Table(box=box.MINIMAL, show_edge=False, expand=True, pad_edge=False, header_style="bold")
    commands.add_column("Command", no_wrap=True, style="bold")
    commands.add_column("Does", ratio=1, overflow="fold")
    for spec in specs():
        commands.add_row(Text(spec.usage), Text(spec.summary))  # text, never markup: "[add TEXT]" is usage
    shortcuts = Table(box=box.MINIMAL, show_edge=False, expand=True, pad_edge=False, header_style="bold")
    shortcuts.add_column("Key", no_wrap=True, style="bold")
    shortcuts.add_column("Does", ratio=1, overflow="fold")
    for key, what in keys:
        shortcuts.add_row(Text(key), Text(what))
    note = Text.assemble("Start a line with ", ("//", "bold"), " to send text that begins with ", ("/", "bold"), ".")
    return Group(commands, Text(""), shortcuts, Text(""), note)


class HelpScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll { width: 90%; max-width: 120; height: auto; max-height: 90%; border: round $accent;
                                  border-title-style: bold; background: $surface; padding: 0 1; overflow-x: hidden; }
    HelpScreen #help-hint { color: $text-muted; }
    """
    BINDINGS = [Binding("escape,q", "close", "Close", id="help.close")]

    def __init__(self, keys: list[tuple[str, str]]) -> None:
        super().__init__()
        self.keys = keys

    def compose(self) -> ComposeResult:
        body = VerticalScroll(id="help-body")
        body.border_title = "Commands"
        body.border_subtitle = "↑↓ PgUp PgDn scroll · Esc closes"
        with body:
            yield Static(help_tables(self.keys), id="help-text")

    def on_mount(self) -> None:
        self.query_one("#help-body").focus()

    def action_close(self) -> None:
        self.dismiss(None)
