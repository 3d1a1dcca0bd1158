"""The library of characters read through the index in the chat's database."""

from __future__ import annotations

import asyncio
import logging

from omoide import locations
from omoide.characters.library import Library
from omoide.errors import OmoideError
from omoide.store import Store
from omoide.store.library import CardIndexFile

log = logging.getLogger(__name__)


def open_library(store: Store) -> Library:
    """The library read through the index kept in `store`'s database."""
    return Library(CardIndexFile(store.db.path))


def command_library() -> Library:
    """The library for a command that opens no chat (`characters list`, `show`,
    `export`): through the index in the database (made, or brought up to its
    schema, first), else, when the database cannot be opened, by reading the folders."""
    path = locations.database_file()

    async def migrated() -> None:
        store = await Store.open(path)
        await store.close()

    try:
        asyncio.run(migrated())
    except OmoideError as exc:  # the index is a cache: the folders can still be read
        log.warning("the library index is not used: %s", exc.message)
        return Library()
    return Library(CardIndexFile(path))
