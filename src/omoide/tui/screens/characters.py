"""The character picker: every character with its card's one-line description,
and the highlighted one's portrait beside the list (`[ui] portraits`); Enter
chats with the one highlighted, `i` imports a card. Opened by `/characters`,
Ctrl+T, and (as a list, with the portrait) on the first-run screen."""

from __future__ import annotations

import re
from collections.abc import Sequence

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from omoide.characters.library import Library, folder_of
from omoide.characters.model import Character, substitute
from omoide.characters.portrait import portrait_in
from omoide.domain.library import IndexedCard
from omoide.tui.command_line import ParsedCommand
from omoide.safe_text import oneline
from omoide.tui.host import Host
from omoide.tui.widgets.portrait import Portrait

PORTRAIT = (20, 10)
"""A portrait's size in cells beside a list of characters (20 x 20 pixels in half-blocks)."""

TAGLINE = 90
"""The longest one-line description shown, in characters."""
_SENTENCE = re.compile(r"(?<=[.!?])\s")


def tagline(character: Character | IndexedCard, user_name: str) -> str:
    """The card's description in one line: its first sentence, or its start."""
    about = character.about if isinstance(character, IndexedCard) else (
        character.description.strip() or character.scenario.strip() or character.personality.strip())
    text = oneline(substitute(about, char=character.display_name, user=user_name))
    first = _SENTENCE.split(text, maxsplit=1)[0] if text else ""
    line = oneline(first or "(no description)")
    return line if len(line) <= TAGLINE else line[:TAGLINE].rsplit(" ", 1)[0].rstrip(",;:") + "…"  # at a word


def fit_list(options: OptionList, screen_height: int, most: int, around: int) -> None:
    """Let `options` take at most `most` rows, and fewer when the box (90% of the
    screen's height) would otherwise push the `around` rows it also needs, the
    line saying which keys do what among them, below its edge. The list scrolls."""
    options.styles.max_height = max(3, min(most, screen_height * 9 // 10 - around))


def character_options(characters: Sequence[Character | IndexedCard], user_name: str, current: str | None) -> list[Option]:
    """One option per character, named by its id: the name, a mark on the current
    one, and the tagline; card text is shown inert (a `Text`, never markup)."""
    options = []
    for c in characters:
        here = "  (chatting now)" if c.id == current else ""
        prompt = Text.assemble((oneline(c.display_name), "bold"), (here, "italic"), "\n", (tagline(c, user_name), "dim"))
        options.append(Option(prompt, id=c.id))
    return options


def show_portrait(portrait: Portrait, characters: list[IndexedCard], character_id: str | None, *, enabled: bool) -> None:
    """Draw the portrait of the character `character_id` (hidden: none, or portraits off)."""
    entry = next((c for c in characters if c.id == character_id), None)
    portrait.show(portrait_in(folder_of(entry)) if enabled and entry is not None else None)


LIST_ROWS = 20
AROUND_LIST = 8
"""Rows the picker needs besides its list: border, title, margins, problems, the keys."""


class CharacterPicker(ModalScreen[Character | None]):
    DEFAULT_CSS = """
    CharacterPicker { align: center middle; }
    CharacterPicker > Vertical { width: 90%; max-width: 110; height: auto; max-height: 90%; border: round $accent; background: $surface; padding: 0 1; }
    CharacterPicker .title { text-style: bold; }
    CharacterPicker Horizontal { height: auto; }
    CharacterPicker OptionList { width: 1fr; height: auto; max-height: 20; margin: 1 0; }
    CharacterPicker Portrait { margin: 1 0 0 1; }
    CharacterPicker .hint { color: $text-muted; }
    """
    BINDINGS = [
        Binding("escape", "cancel", "Close", id="characters.close"),
        Binding("i", "import_card", "Import a card", id="characters.import"),
    ]

    def __init__(self, user_name: str, current: str | None, library: Library | None = None, *,
                 portraits: bool = True) -> None:
        super().__init__()
        self.user_name = user_name
        self.current = current
        self.library = library or Library()
        """Names and descriptions come from its index: a card is read when it is chosen."""
        self.portraits = portraits
        self.characters: list[IndexedCard] = []

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static("Characters", classes="title", markup=False)
            with Horizontal():
                yield OptionList(id="characters")
                yield Portrait(*PORTRAIT, id="characters-portrait")
            yield Static("", id="characters-problems", classes="hint", markup=False)
            yield Static("Enter: chat with them · i: import a card (PNG or JSON) · Esc: close", classes="hint", markup=False)

    def on_mount(self) -> None:
        self.reload(self.current)

    def on_resize(self) -> None:
        fit_list(self.query_one(OptionList), self.size.height, LIST_ROWS, AROUND_LIST)

    def reload(self, highlight: str | None) -> None:
        self.characters, problems = self.library.survey()
        options = self.query_one(OptionList)
        options.clear_options()
        options.add_options(character_options(self.characters, self.user_name, self.current))
        ids = [c.id for c in self.characters]
        options.highlighted = ids.index(highlight) if highlight in ids else 0
        skipped = [f"Skipped: {oneline(p.message)}" for p in problems]
        self.query_one("#characters-problems", Static).update("\n".join(skipped))
        options.focus()

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        show_portrait(self.query_one(Portrait), self.characters, event.option.id, enabled=self.portraits)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        chosen = event.option.id
        self.dismiss(self.library.load(chosen) if chosen is not None else None)

    def action_import_card(self) -> None:
        from omoide.tui.screens.import_card import ImportCardScreen

        def imported(character: Character | None) -> None:
            if character is not None:
                self.reload(character.id)
                self.app.notify(f"Imported {character.display_name}. Enter chats with them.", timeout=5)

        self.app.push_screen(ImportCardScreen(), imported)

    def action_cancel(self) -> None:
        self.dismiss(None)


def open_picker(app: Host) -> None:
    async def chosen(character: Character | None) -> None:
        if character is not None:
            await app.switch_character(character)

    app.push_screen(CharacterPicker(app.session.user.name, app.session.character.id, app.session.library,
                                    portraits=app.session.settings.ui.portraits), chosen)


async def characters_command(app: Host, command: ParsedCommand) -> None:
    open_picker(app)
