"""/log: the memory update log, one expandable node per conversation."""

from __future__ import annotations

import textwrap

from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static, Tree

from omoide.tui.command_line import ParsedCommand
from omoide.safe_text import safe
from omoide.domain.world import Conversation, Update, UpdateKind
from omoide.world.render import update_line, value_lines

if TYPE_CHECKING:
    from omoide.tui.host import Host

LOG_LIMIT = 50


async def log_command(app: Host, command: ParsedCommand) -> None:
    who = app.session.scene.cast.find(command.raw_args) if command.raw_args else app.session.character  # /log NAME in a scene
    owner = who.id
    book = app.session.world.book
    rows = await book.log(owner, LOG_LIMIT)
    app.push_screen(LogScreen(who.display_name, rows, await book.edits(owner), dict(book.names)))


def conversation_label(c: Conversation, updates: list[Update]) -> Text:
    failed = sum(1 for u in updates if u.kind is UpdateKind.FAILED)
    label = Text(f"Conversation #{c.id} · chat #{c.chat_id}, messages #{c.first_id}–#{c.end_id} · "
                 f"{c.ended_at.astimezone():%Y-%m-%d %H:%M} ({c.reason}) · {c.state} · {len(updates)} updates")
    if failed:
        label.append(f" · {failed} failed", style="red")
    if not c.in_force:
        label.append(" · retracted (its end is off the chat's path)", style="yellow")
    return label


class LogScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    LogScreen { align: center middle; }
    LogScreen > Vertical { width: 95%; height: 90%; border: round $accent; background: $surface; padding: 1 2; }
    LogScreen Tree { height: 1fr; }
    LogScreen .hint { color: $text-muted; }
    """
    BINDINGS = [Binding("escape", "close", "Close", id="log.close")]

    def __init__(self, name: str, rows: list[tuple[Conversation, list[Update]]], edits: list[Update], names: dict[str, str]) -> None:
        super().__init__()
        self.name_text = name
        self.rows = rows
        self.edits = edits
        self.names = names

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(safe(f"{self.name_text}: what each conversation changed", style="bold"))
            yield Tree(Text("log"), id="world-log")
            yield Static("Enter expands · Esc close", classes="hint")

    def on_mount(self) -> None:
        tree: Tree[None] = self.query_one(Tree)
        tree.show_root = False
        if not self.rows and not self.edits:
            tree.root.add_leaf(Text("No updates yet. They come when a conversation ends (/end)."))
        for conversation, updates in self.rows:
            node = tree.root.add(conversation_label(conversation, updates))
            for update in updates:
                self._add_update(node, update)
        if self.edits:
            node = tree.root.add(Text(f"Edits by hand · {len(self.edits)}"))
            for update in self.edits:
                self._add_update(node, update)
        tree.root.expand()
        tree.focus()

    def _add_update(self, parent, update: Update) -> None:  # type: ignore[no-untyped-def]
        node = parent.add(update_line(update, self.names))
        if update.kind is not UpdateKind.FAILED:
            # A tree row is one line: long values are wrapped into rows here, to the screen's width.
            width = max(self.app.size.width - 24, 30)
            for label, value, style in (("before: ", update.before, "dim"), ("after:  ", update.after, "")):
                for i, line in enumerate(value_lines(update.field, value, full=True)):
                    for j, row in enumerate(textwrap.wrap(line, width) or [""]):
                        node.add_leaf(Text((label if i == j == 0 else " " * len(label)) + row, style=style))

    def action_close(self) -> None:
        self.dismiss(None)
