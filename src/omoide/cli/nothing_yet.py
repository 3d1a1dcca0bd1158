"""The CLI's one rule for "nothing yet": asked about a character there is nothing
about yet (no chat, no conversation), a command says so on standard error,
naming the character and what to do, and exits 0 (see docs/cli.md)."""

from __future__ import annotations

from omoide.characters.model import Character
from omoide.errors import NothingYet


def no_chat_yet(character: Character) -> NothingYet:
    name = character.display_name
    return NothingYet(f"There is no chat with {name} yet.", f"Start one with `omoide chat {character.id}`.")
