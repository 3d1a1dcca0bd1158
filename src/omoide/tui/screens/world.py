"""/world: what the character carries, with every text field editable; and /end."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from omoide.tui.command_line import ParsedCommand
from omoide.safe_text import inert as printable, oneline, safe
from omoide.world.book import WorldBook
from omoide.domain.world import SELF, Field, WorldView, is_user
from omoide.world.render import about_name, clip, relationship_lines
from omoide.tui.screens.text_edit import TextEditScreen

if TYPE_CHECKING:
    from omoide.tui.host import Host

FIELD_LABELS = {Field.GLOBAL: "global memory", Field.DESCRIPTOR: "descriptor", Field.GOAL: "goal", Field.MEMORY: "memory"}


async def end_command(app: Host, command: ParsedCommand) -> None:
    if app.turn_running:
        app.notify("A reply is still coming; let it finish (or Esc) before ending the conversation.", severity="warning")
        return
    conversation = await app.session.end_conversation()
    names = [p.name for p in conversation.characters]
    who = f"{' and '.join(names)} {'is' if len(names) == 1 else 'are'}"
    app.notify(f"Conversation #{conversation.id} ended. {who} remembering it in the background; "
               "/log shows what changed, /world what they carry now.", timeout=8)


async def world_command(app: Host, command: ParsedCommand) -> None:
    book = app.session.world.book
    book.names.update({p.key: p.name for p in app.session.scene.participants})
    who = app.session.scene.cast.find(command.raw_args) if command.raw_args else app.session.character  # /world NAME in a scene
    app.push_screen(WorldScreen(book, who.id, who.display_name))


class EditFieldScreen(TextEditScreen):
    DEFAULT_CSS = """
    EditFieldScreen { align: center middle; }
    EditFieldScreen > Vertical { width: 90%; max-width: 110; height: 70%; border: round $accent; background: $surface; padding: 1 2; }
    EditFieldScreen TextArea { height: 1fr; }
    EditFieldScreen .hint { color: $text-muted; }
    """
    BINDINGS = [
        Binding("ctrl+s", "save", "Save", id="world.save", priority=True),
        Binding("escape", "cancel", "Cancel", id="world.cancel"),
    ]
    HINT = "Ctrl+S saves (the old text stays in the log) · Esc cancels"
    TEXT_ID = "field-text"

    def title_widget(self) -> Static:
        return Static(safe(self.title_text, style="bold"))


class WorldScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    WorldScreen { align: center middle; }
    WorldScreen > Vertical { width: 95%; height: 90%; border: round $accent; background: $surface; padding: 1 2; }
    WorldScreen OptionList { height: auto; max-height: 45%; }
    WorldScreen #world-details { height: 1fr; }
    WorldScreen .hint { color: $text-muted; }
    """
    BINDINGS = [Binding("escape", "close", "Close", id="world.close")]

    def __init__(self, book: WorldBook, owner: str, name: str) -> None:
        super().__init__()
        self.book = book
        self.owner = owner
        self.name_text = name
        self.names = book.names
        self.view = WorldView(owner)
        self.fields: list[tuple[str, Field]] = []

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(safe(f"What {self.name_text} carries: Enter edits a field", style="bold"))
            yield OptionList(id="world-fields")
            with VerticalScroll(id="world-details"):
                yield Static(id="world-text")
            yield Static("Enter edit · Esc close", classes="hint")

    async def on_mount(self) -> None:
        await self.reload()
        self.query_one(OptionList).focus()

    async def reload(self) -> None:
        self.view = await self.book.view(self.owner)
        self.fields = [(SELF, Field.GLOBAL)]
        for rel in sorted(self.view.relationships.values(), key=lambda r: (not is_user(r.about), r.about)):
            self.fields += [(rel.about, Field.DESCRIPTOR), (rel.about, Field.GOAL), (rel.about, Field.MEMORY)]
        options = self.query_one(OptionList)
        highlighted = options.highlighted
        options.clear_options()
        for about, name in self.fields:
            label = Text(f"{FIELD_LABELS[name]:<14}", style="bold") if about == SELF else Text(
                f"{clip(about_name(about, self.names), width=18):<18} {FIELD_LABELS[name]:<11}", style="bold")
            label.append(" " + oneline(self._value(about, name) or "(empty)"))  # the option wraps it
            options.add_option(Option(label))
        if highlighted is not None and highlighted < len(self.fields):
            options.highlighted = highlighted
        self.query_one("#world-text", Static).update(self.details())

    def _value(self, about: str, name: Field) -> str:
        if about == SELF:
            return self.view.global_memory
        return str(getattr(self.view.about(about), name.value))

    def details(self) -> Text:
        text = Text()
        text.append("Recent conversations\n", style="bold")
        for item in self.view.summaries or []:
            text.append(f"- {printable(item.text)}\n")
        if not self.view.summaries:
            text.append("(none yet: they come when a conversation ends, /end)\n", style="dim")
        for rel in self.view.relationships.values():
            rows = relationship_lines(rel, self.names)
            text.append(f"\n{clip(str(rows[0][1]), full=True)}\n", style="bold")
            for label, value in rows[3:]:
                text.append(f"{label}:\n", style="italic")
                items = value if isinstance(value, list) else []
                for item in items:
                    text.append(f"  - {printable(item.text)}\n")
                if not items:
                    text.append("  (none)\n", style="dim")
        return text

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        about, name = self.fields[event.option_index]
        title = f"{self.name_text}: {FIELD_LABELS[name]}" + ("" if about == SELF else f" about {about_name(about, self.names)}")

        async def saved(text: str | None) -> None:
            if text is None:
                return
            try:
                update = await self.book.edit(self.owner, about, name, text)
            except Exception as exc:  # noqa: BLE001 - shown, never fatal
                message = getattr(exc, "message", None) or repr(exc)
                self.app.notify(f"{message} {getattr(exc, 'hint', '')}".strip(), severity="error", markup=False)
                return
            await self.reload()
            if update is not None:
                self.app.notify(f"Saved. The previous text is kept in the log (update #{update.id}).", timeout=4, markup=False)

        self.app.push_screen(EditFieldScreen(title, self._value(about, name)), saved)

    def action_close(self) -> None:
        self.dismiss(None)
