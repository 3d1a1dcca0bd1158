"""Editing world memory by hand: a new version, logged as an edit, with the
previous text kept in the log and in the old version."""

from __future__ import annotations

from omoide.errors import CommandError
from omoide.store import Store
from omoide.domain.world import SELF, TEXT_FIELDS, Field, Update, UpdateKind


def editable(about: str, name: Field) -> bool:
    return name in TEXT_FIELDS and ((about == SELF) == (name is Field.GLOBAL))


async def edit(store: Store, owner: str, about: str, name: Field, text: str) -> Update | None:
    """Set a text field; None when the text is what it already was."""
    if not editable(about, name):
        where = "the character's own" if about == SELF else "a relationship's"
        raise CommandError(f"'{name}' is not a text field of {where} memory.",
                           "Edit global (the character's own), or memory, goal or descriptor of a relationship.")
    text = text.strip()
    if name is Field.DESCRIPTOR and len(text.split()) > 5:
        raise CommandError("A descriptor is a few words.", "Write 1-3 words, like 'regular customer'.")
    if (await store.world.current(owner, about, name) or "") == text:
        return None
    return await store.world.change(owner, about, name, text, step="edit", kind=UpdateKind.EDIT)
