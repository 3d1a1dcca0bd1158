"""Storage: one aiosqlite connection, WAL, named migrations, a message tree."""

from omoide.store.store import Store

__all__ = ["Store"]
