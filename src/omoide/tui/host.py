"""What a slash-command handler may use of the app, and how a command is run.

Handlers see the app only through `Host`, so they never import it; the one
table of commands (name, usage, help, handler) is `tui/slash.py`, and
`CommandTable` dispatches a parsed command through it, so a parsed command
always runs.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Protocol

from textual.notifications import SeverityLevel
from textual.screen import Screen, ScreenResultCallbackType, ScreenResultType

from omoide.characters.model import Character
from omoide.tui.command_line import ParsedCommand
from omoide.errors import CommandError, OmoideError
from omoide.chat.events import TurnEvent
from omoide.llm.base import Backend
from omoide.chat.session import ChatSession
from omoide.tui.download import Downloads
from omoide.tui.typeahead import Held, TypeAhead
from omoide.tui.widgets.transcript import Transcript

log = logging.getLogger(__name__)


class Host(Protocol):
    """The app as a command handler sees it."""

    session: ChatSession
    typeahead: TypeAhead
    """Keys typed before the composer (or the first run's welcome) could take them."""

    @property
    def transcript(self) -> Transcript: ...

    @property
    def turn_running(self) -> bool: ...

    def notify(self, message: str, *, title: str = "", severity: SeverityLevel = "information",
               timeout: float | None = None, markup: bool = False) -> None: ...

    def push_screen(self, screen: Screen[ScreenResultType],
                    callback: ScreenResultCallbackType[ScreenResultType] | None = None) -> object: ...

    def exit(self) -> None: ...

    def command_help(self) -> list[tuple[str, str]]:
        """(usage, what it does) of every slash command, for /help."""

    def key_help(self) -> list[tuple[str, str]]: ...

    def prefill(self, text: str) -> None:
        """Put `text` in the message box for the user to change."""

    def leave_selection(self) -> None:
        """End message selection: the focus goes back to the composer."""

    def run_turn(self, start: Callable[[], AsyncIterator[TurnEvent]]) -> object:
        """Run a turn in the background, showing its events as they come."""

    async def stop_turn_and_wait(self) -> None: ...

    async def show_chat(self) -> None:
        """Show the chat again from its head (after the head moved)."""

    async def show_diary(self) -> None:
        """Show the diary pane, refreshed."""

    def show_amnesia(self) -> None:
        """Show in the status bar whether /amnesia hides memory in this chat."""

    async def action_toggle_diary(self) -> None: ...

    def action_inspect_prompt(self) -> None: ...

    def action_chat_list(self) -> None: ...

    async def switch_chat(self, chat_id: int | None) -> None:
        """Open another chat with this character (None: a new one) in place of this one."""

    async def switch_character(self, character: Character) -> None:
        """Chat with `character` (its most recent chat, or a new one) in place of this chat."""

    async def rename_user(self, name: str) -> None:
        """You are `name` from now on, in the profile and on screen."""

    async def type_ahead(self, held: Held) -> None:
        """Type `held` into the composer as if it had had the focus (Enter sends)."""

    def recount_prompt(self) -> None:
        """Build and count the next prompt again now (its memory changed): the
        status line and /prompt show it without waiting for the next message."""

    def use_backend(self, backend: Backend) -> None:
        """Answer with `backend` from the next turn on."""

    def copy_to_clipboard(self, text: str) -> None:
        """Send `text` to the terminal's clipboard (OSC 52)."""

    def theme_names(self) -> list[str]:
        """The themes there are, by name."""

    def choose_theme(self, name: str) -> None:
        """Use the theme `name` and remember it; CommandError when there is none by that name."""

    @property
    def downloads(self) -> Downloads:
        """The background model download."""


Handler = Callable[[Host, ParsedCommand], Awaitable[None]]


class CommandTable:
    """Command name -> handler; `dispatch` turns a handler's failure into a notice."""

    def __init__(self, handlers: Mapping[str, Handler], *, recount: frozenset[str] = frozenset()) -> None:
        self._handlers = dict(handlers)
        self._recount = recount
        """The commands after which the prompt is counted again (their change is in it)."""

    def __contains__(self, name: object) -> bool:
        return name in self._handlers

    async def dispatch(self, host: Host, command: ParsedCommand) -> None:
        handler = self._handlers[command.name]
        try:
            await handler(host, command)
            if command.name in self._recount:
                host.recount_prompt()
        except OmoideError as exc:
            report(host, exc, f"/{command.name}")
        except Exception as exc:  # a bug in one command must not close the chat
            log.exception("/%s failed", command.name)
            host.notify(f"Something went wrong: {exc!r}", severity="error", title=f"/{command.name}")


def report(host: Host, error: OmoideError, title: str) -> None:
    """A command that failed, as a notice: a warning when it was typed wrong
    (the user's to fix), an error otherwise."""
    severity: SeverityLevel = "warning" if isinstance(error, CommandError) else "error"
    host.notify(f"{error.message} {error.hint}".strip(), severity=severity, title=title)
