"""The command palette (Textual's own, on its own key since Ctrl+P is the prompt
inspector): every slash command from the one table, every key's action, every
character, chat, branch and theme, found by fuzzy name and run.

The items are gathered when the palette opens (`PaletteItem`s from `gather`);
names from cards, chat titles and branch names are shown as plain text, never
markup.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, cast

from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.content import Content
from textual.markup import escape

from omoide.characters.model import Character
from omoide.errors import OmoideError
from omoide.safe_text import oneline
from omoide.tui import fuzzy, slash
from omoide.tui.host import CommandTable, Host, report

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class PaletteItem:
    name: str
    """What is searched and shown (plain text)."""
    help: str
    """The line under it (plain text)."""
    run: Callable[[], Awaitable[None]]


class PaletteHost(Host, Protocol):
    """The app as the palette sees it."""

    commands: CommandTable

    async def palette_items(self) -> list[PaletteItem]: ...

    def actions_for_palette(self) -> list[tuple[str, str, str]]:
        """(what it does, its keys, the action to run) of every key binding."""

    def theme_names(self) -> list[str]: ...

    def choose_theme(self, name: str) -> None: ...

    async def run_action(self, action: str) -> bool: ...


def _takes_arguments(usage: str) -> bool:
    """Whether a command needs words after its name ('/rename TITLE'), not only may ('/log [NAME]')."""
    rest = usage.split(maxsplit=1)[1:]
    return bool(rest) and not rest[0].startswith("[")


def _guarded(app: Host, title: str, run: Callable[[], Awaitable[None]]) -> Callable[[], Awaitable[None]]:
    async def guarded() -> None:
        try:
            await run()
        except OmoideError as exc:
            report(app, exc, title)
        except Exception as exc:  # one item's bug must not close the chat
            log.exception("palette item %s failed", title)
            app.notify(f"Something went wrong: {exc!r}", severity="error", title=title)

    return guarded


def slash_items(app: PaletteHost) -> list[PaletteItem]:
    items = []
    for command in slash.TABLE:
        if _takes_arguments(command.usage):
            async def prefill(usage: str = command.usage, name: str = command.name) -> None:
                app.prefill(f"/{name} ")
                app.notify(f"Type the rest: {usage}", timeout=4)
            items.append(PaletteItem(command.usage, command.summary, prefill))
        else:
            async def run(name: str = command.name) -> None:
                parsed = slash.parse(f"/{name}")
                assert parsed is not None
                await app.commands.dispatch(app, parsed)
            items.append(PaletteItem(command.usage, command.summary, run))
    return items


async def gather(app: PaletteHost) -> list[PaletteItem]:
    """Everything the palette can find now, each item guarded: a failure is a notice."""
    from omoide.characters.library import scan_characters
    from omoide.tui.commands import restore

    items = slash_items(app)
    for what, keys, action in app.actions_for_palette():
        async def act(action: str = action) -> None:
            await app.run_action(action)
        items.append(PaletteItem(what, f"Key: {keys}", act))
    listing = await asyncio.to_thread(scan_characters)
    for character in listing.characters:
        async def talk(character: Character = character) -> None:
            await app.switch_character(character)
        items.append(PaletteItem(f"Character: {oneline(character.display_name, 60)}", "Chat with them", talk))
    for chat in await app.session.navigator.chats():
        async def open_chat(chat_id: int = chat.id) -> None:
            await app.switch_chat(chat_id)
        title = oneline(chat.title or f"chat #{chat.id}", 60)
        items.append(PaletteItem(f"Chat: {title}", f"{app.session.character.display_name}, {chat.updated_at.astimezone():%Y-%m-%d %H:%M}", open_chat))
    for info in await app.session.navigator.branches((await app.session.refresh()).head_id):
        async def go(name: str = info.branch.name) -> None:
            await restore(app, name)
        items.append(PaletteItem(f"Branch: {oneline(info.branch.name, 60)}", f"Restore it ({info.since_fork} messages since the fork)", go))
    for theme in app.theme_names():
        async def use(theme: str = theme) -> None:
            app.choose_theme(theme)
        items.append(PaletteItem(f"Theme: {theme}", "Use this theme (remembered)", use))
    return [PaletteItem(oneline(i.name), oneline(i.help), _guarded(app, i.name, i.run)) for i in items]


class ChatCommands(Provider):
    """Textual's palette provider over `gather`'s items."""

    items: tuple[PaletteItem, ...] = ()

    async def startup(self) -> None:
        try:
            self.items = tuple(await cast(PaletteHost, self.app).palette_items())
        except OmoideError as exc:
            report(cast(Host, self.app), exc, "Palette")
            self.items = ()
        except Exception as exc:  # an unreadable list must not close the chat: the palette is empty
            log.exception("gathering the palette's items failed")
            cast(Host, self.app).notify(f"Something went wrong: {exc!r}", severity="error", title="Palette")
            self.items = ()

    async def search(self, query: str) -> Hits:
        for item in self.items:  # fuzzy.match is linear in the name: Textual's matcher can take minutes on one
            found = fuzzy.match(query, item.name)
            if found is not None:
                yield Hit(found.score, _highlighted(item.name, found.offsets), item.run, text=item.name, help=escape(item.help))

    async def discover(self) -> Hits:
        for item in self.items:
            yield DiscoveryHit(Content(item.name), item.run, text=item.name, help=escape(item.help))


def _highlighted(name: str, offsets: Sequence[int]) -> Content:
    content = Content(name)  # plain: a card's '[b]' is text
    for offset in offsets:
        if 0 <= offset < len(name) and not name[offset].isspace():
            content = content.stylize("bold underline", offset, offset + 1)
    return content


