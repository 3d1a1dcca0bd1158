"""The chat's keys as the keymap has them now: how each is written, what it does
(the message actions named as remapped), the rows of /help."""

from __future__ import annotations

import re
from collections.abc import Mapping

from textual.app import App
from textual.binding import Binding

from omoide.safe_text import inert
from omoide.tui import slash
from omoide.tui.widgets.composer import Composer, newline_help
from omoide.tui.widgets.message import MessageView

MESSAGE_ACTIONS = ("message.edit", "message.delete", "message.regenerate", "message.copy", "message.branch")
"""The keys chat.select's description names, in its order (e, d, r, c, b)."""
FUNCTION_KEY = re.compile(r"\bf\d{1,2}\b")
"""'f2' as Textual writes it, shown 'F2' as keyboards print it."""


class KeysApp(App[None]):
    """The app's keys, read from the declarations (`Composer`, the app, `MessageView`)."""

    keymap: dict[str, str]

    def set_keymap(self, keymap: Mapping[str, str]) -> None:
        self.keymap = dict(keymap)
        super().set_keymap(self.keymap)

    def keys_of(self, binding_id: str) -> str:
        """How the keys of the binding `binding_id` are written, as the keymap has them now."""
        binding = next(b for b in [*Composer.BINDINGS, *self.BINDINGS, *MessageView.BINDINGS]
                       if isinstance(b, Binding) and b.id == binding_id)
        keys = self.keymap.get(binding_id, binding.key).split(",")
        shown = (self.get_key_display(binding.with_key(key.strip())) for key in keys)
        return inert(" / ".join(FUNCTION_KEY.sub(lambda m: m.group(0).upper(), key) for key in shown))

    def describe(self, binding: Binding) -> str:
        """What `binding` does, naming the keys of the message actions as the keymap has them."""
        if binding.id != "chat.select":
            return binding.description
        keys = ", ".join(self.keys_of(action).split(" / ")[0] for action in MESSAGE_ACTIONS)
        return f"Select a message (then {keys} act on it)"

    def command_help(self) -> list[tuple[str, str]]:
        return slash.help_rows()

    def key_help(self) -> list[tuple[str, str]]:
        """(keys, what they do) for every chat binding, as the keymap has them now.
        Read from the declarations, since a screen's own PageUp shadows the app's
        in `active_bindings` even though the app's is the one that acts."""
        rows = []
        for binding in [*Composer.BINDINGS, *self.BINDINGS, *MessageView.BINDINGS]:
            assert isinstance(binding, Binding) and binding.id
            what = newline_help(self.keymap.get(binding.id, binding.key)) if binding.id == "chat.newline" \
                else self.describe(binding)
            rows.append((self.keys_of(binding.id), what))
        return rows
