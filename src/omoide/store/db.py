"""One aiosqlite connection shared by every repository.

Writes go through `write()`, which serialises this process's transactions and
takes SQLite's write lock up front; reads go through `one()` and `all()`. All
three turn SQLite's operational errors into `StoreError`s that say what to do.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeAlias

import aiosqlite

from omoide.store.connection import storage_error, write_transaction

Params: TypeAlias = Sequence[Any] | Mapping[str, Any]


class Database:
    def __init__(self, conn: aiosqlite.Connection, path: Path) -> None:
        self.conn = conn
        self.path = path
        self._lock = asyncio.Lock()
        self.clock: Callable[[], datetime] = lambda: datetime.now(UTC)
        """When things written now happen: the wall clock, or a simulated one (the
        memory check spreads a conversation over days; tests set their own)."""
        self.writes = 0
        """Write transactions ended (committed or rolled back) on this connection:
        what was read while one was open may not stand once it ends."""

    def now_iso(self) -> str:
        """The time stamp of a row written now, by `clock`."""
        return self.clock().astimezone(UTC).isoformat(timespec="microseconds")

    @asynccontextmanager
    async def write(self) -> AsyncIterator[aiosqlite.Connection]:
        async with self._lock:
            try:
                async with write_transaction(self.conn) as conn:
                    yield conn
            except (sqlite3.OperationalError, OSError) as exc:
                raise storage_error(self.path, exc) from exc
            finally:
                self.writes += 1

    def version(self) -> tuple[int, int]:
        """Changes with every write of this connection, ended or under way (not
        with another connection's: PRAGMA data_version tells those)."""
        return self.writes, self.conn.total_changes

    async def one(self, sql: str, params: Params = ()) -> sqlite3.Row | None:
        """The first row of a query that reads one (by id, an aggregate, LIMIT 1)."""
        found = await self.all(sql, params)
        return found[0] if found else None

    async def all(self, sql: str, params: Params = ()) -> list[sqlite3.Row]:
        # One trip to aiosqlite's thread for the statement and its rows (a cursor
        # takes three: execute, fetch, close); a turn reads some seventy times.
        try:
            return list(await self.conn.execute_fetchall(sql, params))
        except sqlite3.OperationalError as exc:
            raise storage_error(self.path, exc) from exc
