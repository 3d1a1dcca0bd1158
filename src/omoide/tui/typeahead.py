"""Keys that reach the app before its composer can take them.

Textual reads the terminal from the moment it starts, but the composer is
mounted and focused only once the chat is on screen; a key read before that
goes to the bare screen and is lost. `TypeAhead` holds those keys (and pastes)
and gives them back, in order, once the composer has the focus. A line feed
read back is an Enter typed while the terminal was still in line mode.

On the first run the welcome asks your name before anything is sent: the
keys up to the first Enter are typed into its name field (`type_into_line`),
and those after it wait until the welcome is answered, then go to the composer
(so a message typed ahead is sent under the name given, never as "You").

They are given back by `replay`, one at a time and at once, not posted again:
a burst of posted keys would race (Enter acts when it bubbles back up to the
app, after the keys behind it are already in the composer).
"""

from __future__ import annotations

from typing import Any

from textual import events
from textual.app import App
from textual.widgets import Input
from omoide.tui.widgets.composer import Composer


class TypeAhead:
    def __init__(self) -> None:
        self._held: list[events.Key | events.Paste] | None = []

    @property
    def holding(self) -> bool:
        return self._held is not None

    def hold(self, event: events.Event) -> bool:
        """Keep `event` if it is typed input arriving too early; True if kept."""
        if self._held is None or not isinstance(event, events.Key | events.Paste) or event.is_forwarded:
            return False
        if isinstance(event, events.Paste):
            self._held.append(events.Paste(event.text))
        elif event.key == "ctrl+j" and event.character == "\n":
            self._held.append(events.Key("enter", "\r"))
        else:
            self._held.append(events.Key(event.key, event.character))
        return True

    def release(self) -> list[events.Key | events.Paste]:
        """The held input, oldest first; from now on nothing is held."""
        held, self._held = self._held or [], None
        return held


Held = list[events.Key | events.Paste]


def type_into_line(line: Input, held: Held) -> tuple[bool, Held]:
    """Type `held` into the one-line field `line` up to the first Enter.

    Returns whether an Enter ended the line, and the keys after it (for the composer)."""
    for index, event in enumerate(held):
        if isinstance(event, events.Paste):
            line.insert_text_at_cursor(" ".join(event.text.split()))
        elif event.key == "enter":
            return True, held[index + 1:]
        elif event.key == "backspace":
            line.action_delete_left()
        elif event.is_printable and event.character:
            line.insert_text_at_cursor(event.character)
    return False, []


async def replay(app: App[Any], composer: Composer, held: list[events.Key | events.Paste]) -> None:
    """Type `held` into `composer` as if it had had the focus all along: text is
    inserted, and any other key runs the action it is bound to (Enter sends)."""
    for event in held:
        if isinstance(event, events.Paste):
            composer.insert_text_at_cursor(event.text)
        elif event.is_printable and event.character:
            composer.insert_text_at_cursor(event.character)
        else:
            active = app.active_bindings.get(event.key)
            if active is not None and active.enabled:
                await app.run_action(active.binding.action, active.node)
