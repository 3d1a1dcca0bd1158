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



def help_tables(commands_help: list[tuple[str, str]], keys: list[tuple[str, str]]) -> Group:
    commands = Table(box=box.MINIMAL, show_edge=False, expand=True, pad_edge=False, header_style="bold")
    commands.add_column("Command", no_wrap=True, style="bold")
    commands.add_column("Does", ratio=1, overflow="fold")
    for usage, summary in commands_help:
        commands.add_row(Text(usage), Text(summary))  # text, never markup: "[add TEXT]" is usage
    shortcuts = Table(box=box.MINIMAL, show_edge=False, expand=True, pad_edge=False, header_style="bold")
    shortcuts.add_column("Key", no_wrap=True, style="bold")
    shortcuts.add_column("Does", ratio=1, overflow="fold")
    for key, what in keys:
        shortcuts.add_row(Text(key), Text(what))
    note = Text.assemble("Start a line with ", ("//", "bold"), " to send text that begins with ", ("/", "bold"), ".")
    return Group(commands, Text(""), shortcuts, Text(""), note)


class HelpBody(VerticalScroll):
    """The scrolling view, without a scrollbar (its two-cell thumb reads as stray
    glyphs in a plain terminal): the border says where you are instead."""

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        self.show_position()

    def on_resize(self) -> None:
        self.show_position()

    def show_position(self) -> None:
        total = self.virtual_size.height
        height = self.scrollable_content_region.height
        if total <= height or height <= 0:
            self.border_subtitle = "Esc closes"
            return
        top = round(self.scroll_y)
        self.border_subtitle = f"lines {top + 1}–{min(top + height, total)} of {total} · ↑↓ PgUp PgDn · Esc closes"


class HelpScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > HelpBody { width: 90%; max-width: 120; height: auto; max-height: 90%; border: round $accent;
                            border-title-style: bold; background: $surface; padding: 0 1; overflow-x: hidden;
                            scrollbar-size-vertical: 0; }
    HelpScreen #help-hint { color: $text-muted; }
    """
    BINDINGS = [Binding("escape,q", "close", "Close", id="help.close")]

    def __init__(self, commands_help: list[tuple[str, str]], keys: list[tuple[str, str]]) -> None:
        super().__init__()
        self.commands_help = commands_help
        self.keys = keys

    def compose(self) -> ComposeResult:
        body = HelpBody(id="help-body")
        body.border_title = "Commands"
        with body:
            yield Static(help_tables(self.commands_help, self.keys), id="help-text")

    def on_mount(self) -> None:
        body = self.query_one(HelpBody)
        body.focus()
        self.call_after_refresh(body.show_position)

    def action_close(self) -> None:
        self.dismiss(None)
