"""Opening the database: checks that refuse foreign or corrupt files, the
pragmas, and the migrations."""

from __future__ import annotations

import asyncio
import errno
import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path

import aiosqlite

from omoide import locations
from omoide.errors import DatabaseTooNew, NotAnOmoideDatabase, StorageUnavailable, StoreError
from omoide.store.migrations import MIGRATIONS, Migration
from omoide.store.wal import check_before_open

APPLICATION_ID = 0x6F6D6F69  # "omoi"
SQLITE_HEADER = b"SQLite format 3\x00"
BUSY_TIMEOUT_MS = 10_000


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


def _refuse(path: Path, why: str) -> NotAnOmoideDatabase:
    return NotAnOmoideDatabase(
        f"{path} is not an omoide database: {why}.",
        "omoide will not touch it. Move it away (or set OMOIDE_HOME to another "
        "directory) and omoide will start a new database.",
    )


def check_header(path: Path) -> None:
    """Refuse a file that is not SQLite at all before SQLite can touch it."""
    if path.is_dir():
        raise StorageUnavailable(
            f"The database path {path} is a directory, not a file.",
            "Move that directory away, or set OMOIDE_HOME to another directory.",
        )
    try:
        if not path.exists() or path.stat().st_size == 0:
            return
        with path.open("rb") as fh:
            header = fh.read(len(SQLITE_HEADER))
    except OSError as exc:
        raise storage_error(path, exc) from exc
    if header != SQLITE_HEADER:
        raise _refuse(path, "it is not an SQLite file")


def _no_space(path: Path) -> bool:
    """SQLite reports some writes that fail for want of space as a plain I/O error."""
    import shutil

    folder = path if path.is_dir() else path.parent
    try:
        return shutil.disk_usage(folder).free < 64 * 1024
    except OSError:
        return False


def storage_error(path: Path, exc: BaseException) -> StoreError:
    text = str(exc).lower()
    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return StorageUnavailable(f"The disk holding {path} is full.", "Free some space and try again; nothing stored was lost.")
    if "disk is full" in text or "database or disk is full" in text or ("disk i/o error" in text and _no_space(path)):
        return StorageUnavailable(f"The disk holding {path} is full.", "Free some space and try again; nothing stored was lost.")
    if "readonly" in text or "read-only" in text or "unable to open" in text or (isinstance(exc, OSError) and exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM)):
        return StorageUnavailable(f"{path} cannot be written (read-only or no permission).", "Check the permissions of the data directory, or set OMOIDE_HOME elsewhere.")
    if "locked" in text or "busy" in text:
        return StorageUnavailable(f"{path} stayed locked by another process for over {BUSY_TIMEOUT_MS // 1000} s.", "Close other omoide windows that are stuck, then try again.")
    if "malformed" in text or "not a database" in text or "corrupt" in text:
        return _refuse(path, f"SQLite reports '{exc}'")
    return StoreError(f"The database {path} failed: {exc}.", "Run `omoide doctor` for details.")


async def open_connection(path: Path, *, synchronous: str = "NORMAL") -> aiosqlite.Connection:
    if path != Path(":memory:"):
        try:
            locations.private_dir(path.parent)
        except OSError as exc:
            raise storage_error(path.parent, exc) from exc
        check_header(path)
        check_before_open(path)  # before SQLite replays the log and drops what it cannot read
        try:
            # SQLite gives the WAL and shared-memory files the database file's mode.
            locations.private_file(path)
        except OSError as exc:
            raise storage_error(path, exc) from exc
    try:
        conn = await aiosqlite.connect(path, isolation_level=None)
    except (sqlite3.Error, OSError) as exc:
        raise storage_error(path, exc) from exc
    conn.row_factory = sqlite3.Row
    try:
        await conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        await _check_identity(conn, path)
        mode = await _fetch_value(conn, "PRAGMA journal_mode = WAL")
        if str(mode).lower() != "wal" and path != Path(":memory:"):
            raise StorageUnavailable(f"{path} could not be put in WAL mode (got {mode}).", "Is the data directory on a network file system? Use a local disk.")
        await conn.execute("PRAGMA foreign_keys = ON")
        await conn.execute(f"PRAGMA synchronous = {'FULL' if synchronous == 'FULL' else 'NORMAL'}")
        await migrate(conn)
    except BaseException as exc:
        await conn.close()
        if isinstance(exc, StoreError):
            raise
        if isinstance(exc, (sqlite3.Error, OSError)):
            raise storage_error(path, exc) from exc
        raise
    return conn


async def _fetch_value(conn: aiosqlite.Connection, sql: str, params: tuple[object, ...] = ()) -> object:
    async with conn.execute(sql, params) as cur:
        row = await cur.fetchone()
    return row[0] if row else None


async def _check_identity(conn: aiosqlite.Connection, path: Path) -> None:
    try:
        app_id = await _fetch_value(conn, "PRAGMA application_id")
        tables = await _fetch_value(conn, "SELECT count(*) FROM sqlite_schema")
    except sqlite3.OperationalError as exc:
        raise storage_error(path, exc) from exc
    except sqlite3.DatabaseError as exc:
        raise _refuse(path, f"SQLite reports '{exc}'") from exc
    if app_id == APPLICATION_ID:
        return
    if app_id == 0 and tables == 0:
        await conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        return
    raise _refuse(path, "it belongs to another program")


async def applied_migrations(conn: aiosqlite.Connection) -> list[str]:
    async with conn.execute("SELECT name FROM schema_migrations ORDER BY name") as cur:
        return [row[0] for row in await cur.fetchall()]


async def migrate(conn: aiosqlite.Connection, migrations: list[Migration] = MIGRATIONS) -> list[str]:
    """Apply the migrations not yet recorded, each in its own transaction."""
    await conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)"
    )
    done = set(await applied_migrations(conn))
    unknown = sorted(done - {m.name for m in migrations})
    if unknown:
        raise DatabaseTooNew(
            f"The database was written by a newer omoide (it has the schema change '{unknown[-1]}', which this version does not know).",
            "Upgrade omoide to open it (pip install -U omoide), or set OMOIDE_HOME to another directory to start afresh. Nothing was changed.",
        )
    applied: list[str] = []
    for migration in migrations:
        if migration.name in done:
            continue
        await conn.execute("BEGIN IMMEDIATE")
        try:
            for statement in _statements(migration.sql):
                await conn.execute(statement)
            await conn.execute(
                "INSERT INTO schema_migrations (name, applied_at) VALUES (?, ?)",
                (migration.name, now_iso()),
            )
            await conn.execute("COMMIT")
        except BaseException:
            await conn.execute("ROLLBACK")
            raise
        applied.append(migration.name)
    return applied


def _statements(sql: str) -> list[str]:
    """Split a migration script on complete statements (sqlite3.complete_statement)."""
    statements: list[str] = []
    buffer = ""
    for line in sql.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            if buffer.strip():
                statements.append(buffer.strip())
            buffer = ""
    if buffer.strip():
        statements.append(buffer.strip())
    return statements


@asynccontextmanager
async def write_transaction(conn: aiosqlite.Connection) -> AsyncIterator[aiosqlite.Connection]:
    """BEGIN IMMEDIATE takes the write lock up front, so two processes wait on the
    busy timeout instead of failing with 'database is locked' on upgrade."""
    begin = asyncio.ensure_future(conn.execute("BEGIN IMMEDIATE"))
    try:
        await asyncio.shield(begin)
    except asyncio.CancelledError:
        # Cancelled (Ctrl+C, Esc) while the BEGIN was queued: it still runs on the
        # connection's thread, and would leave a transaction open for the next write.
        try:
            await begin
        finally:
            if conn.in_transaction:
                await conn.execute("ROLLBACK")
        raise
    try:
        yield conn
    except BaseException:
        # SQLite rolls back by itself on some errors (a full disk); a second
        # ROLLBACK would fail and hide the error that matters.
        if conn.in_transaction:
            await conn.execute("ROLLBACK")
        raise
    else:
        await conn.execute("COMMIT")
