"""Every path omoide uses, in one place. OMOIDE_HOME moves all of them
(data, config and logs) under one directory; tests rely on that."""

from __future__ import annotations

import errno
import functools
import os
import stat
from pathlib import Path

import platformdirs

APP_NAME = "omoide"


def _home() -> Path | None:
    value = os.environ.get("OMOIDE_HOME")
    return Path(value).expanduser() if value else None


def data_dir() -> Path:
    home = _home()
    return home / "data" if home else Path(platformdirs.user_data_dir(APP_NAME))


def config_dir() -> Path:
    home = _home()
    return home / "config" if home else Path(platformdirs.user_config_dir(APP_NAME))


def log_dir() -> Path:
    home = _home()
    return home / "logs" if home else Path(platformdirs.user_log_dir(APP_NAME))


def config_file() -> Path:
    override = os.environ.get("OMOIDE_CONFIG")
    return Path(override).expanduser() if override else config_dir() / "config.toml"


def database_file() -> Path:
    return data_dir() / "omoide.db"


def user_characters_dir() -> Path:
    return data_dir() / "characters"


@functools.cache
def bundled_characters_dir() -> Path:
    """The characters shipped with omoide: inside the wheel, or at the repo root
    in an editable install (found once: a turn asks, and resolving costs a stat per part)."""
    packaged = Path(__file__).parent / "_bundled_characters"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[2] / "characters"


def lorebooks_dir() -> Path:
    """Standalone lorebooks: files here apply to every chat, files in a
    subfolder named after a character apply to that character's chats."""
    return data_dir() / "lorebooks"


def personas_dir() -> Path:
    """Personas imported from SillyTavern: one folder each, a persona.toml and its avatar."""
    return data_dir() / "personas"


def log_file() -> Path:
    return log_dir() / "omoide.log"


PRIVATE_DIR = 0o700
PRIVATE_FILE = 0o600


def private_dir(path: Path) -> Path:
    """Make `path` and any missing parents, each readable by the user only."""
    missing: list[Path] = []
    current = path
    while not current.exists() and current != current.parent:
        missing.append(current)
        current = current.parent
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=PRIVATE_DIR)
        except FileExistsError:
            continue
        os.chmod(folder, PRIVATE_DIR)  # whatever the umask: it can take the owner's bits away too
    return path


def tighten(folder: Path) -> bool:
    """Make one of omoide's own folders private again when an earlier version
    or a loose umask left it open to others (only one this user owns).
    Returns whether it changed."""
    if os.name != "posix":
        return False
    try:
        found = folder.stat()
        if not stat.S_ISDIR(found.st_mode) or found.st_uid != os.getuid() or not found.st_mode & 0o077:
            return False
        os.chmod(folder, PRIVATE_DIR)
    except OSError:
        return False  # `omoide doctor` reports what is still loose
    return True


def tighten_own_folders() -> None:
    """The data, config and log folders, private again if they are not."""
    for folder in (data_dir(), config_dir(), log_dir()):
        tighten(folder)


def private_file(path: Path) -> Path:
    """Create `path` empty and readable by the user only, unless it exists."""
    private_dir(path.parent)
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, PRIVATE_FILE)
    except FileExistsError:
        return path
    try:
        if hasattr(os, "fchmod"):
            os.fchmod(fd, PRIVATE_FILE)  # whatever the umask
    finally:
        os.close(fd)
    return path


def write_private(path: Path, data: str | bytes, *, make_parents: bool = True) -> Path:
    """Write `path` whole, readable by the user only: through a temporary file
    created 0600 beside it, then renamed over it, so a reader never sees half a
    file and the file is never, even for a moment, readable by others.
    `make_parents`: create missing folders, private too (omoide's own folders;
    a folder the user named for an export must already exist)."""
    if make_parents:
        private_dir(path.parent)
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    payload = data.encode("utf-8") if isinstance(data, str) else data
    try:
        fd = os.open(temp, os.O_CREAT | os.O_EXCL | os.O_WRONLY | getattr(os, "O_BINARY", 0), PRIVATE_FILE)
        with os.fdopen(fd, "wb") as out:
            if hasattr(os, "fchmod"):
                os.fchmod(fd, PRIVATE_FILE)  # whatever the umask
            out.write(payload)
        os.replace(temp, path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    return path


class NotAFile(OSError):
    """A device, FIFO or socket where a file was expected: never opened for
    reading (/dev/zero never ends, a FIFO blocks until someone writes)."""


class FileTooLarge(OSError):
    """A file over the size its reader accepts; `limit` is that size in bytes."""

    def __init__(self, path: Path, limit: int, size: int | None = None) -> None:
        known = f"{_size(size)}, " if size is not None else ""
        super().__init__(errno.EFBIG, f"it is {known}over the {_size(limit)} limit", str(path))
        self.limit = limit


def _size(count: int) -> str:
    return f"{count / 1_048_576:.0f} MiB" if count >= 1_048_576 else f"{count / 1024:.0f} KiB"


def _kind(mode: int) -> str:
    kinds = {stat.S_ISDIR: "a folder", stat.S_ISCHR: "a device", stat.S_ISBLK: "a device",
             stat.S_ISFIFO: "a FIFO (named pipe)", stat.S_ISSOCK: "a socket"}
    return next((name for test, name in kinds.items() if test(mode)), "not a regular file")


def why_not_a_file(path: Path, what: str = "file") -> str | None:
    """Why `path` cannot be read as a `what` ("does not exist", "is a folder, not
    a model file", "is a device, not ..."), None when it is a regular file: what
    a message says instead of calling a folder or a FIFO missing."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return "is a broken link (what it points to does not exist)" if os.path.islink(path) else "does not exist"
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc})"
    if stat.S_ISREG(mode):
        return None
    link = f"is a link to {os.path.realpath(path)}, which " if os.path.islink(path) else ""
    return f"{link}is {_kind(mode)}, not a {what}"


def read_regular(path: Path, limit: int) -> bytes:
    """A user-given file's bytes: only a regular file (a symlink is followed
    to one), and at most `limit` bytes, whatever size it reports. Raises
    NotAFile, FileTooLarge or the OSError of the open or read."""
    def refuse(mode: int) -> NotAFile:
        return NotAFile(errno.EINVAL, f"it is {_kind(mode)}, not a file", str(path))

    mode = os.stat(path).st_mode
    if not stat.S_ISREG(mode):
        raise refuse(mode)  # checked before opening: opening a FIFO or a tape can block or act
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    try:
        opened = os.fstat(fd)  # it may have been swapped since the stat
        if not stat.S_ISREG(opened.st_mode):
            raise refuse(opened.st_mode)
        if opened.st_size > limit:
            raise FileTooLarge(path, limit, opened.st_size)
        chunks: list[bytes] = []
        left = limit + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    finally:
        os.close(fd)
    if left <= 0:
        raise FileTooLarge(path, limit)
    return b"".join(chunks)


def loose_permissions() -> list[tuple[Path, int]]:
    """omoide's own files and folders that others can read or write: (path, mode)."""
    if os.name != "posix":
        return []
    db = database_file()
    templates = config_dir() / "templates"
    candidates = [data_dir(), config_dir(), log_dir(), config_file(), db,
                  db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm"), *sorted(log_dir().glob("omoide.log*")),
                  templates, *sorted(templates.glob("*.txt"))]
    loose: list[tuple[Path, int]] = []
    for path in dict.fromkeys(candidates):
        try:
            mode = path.stat().st_mode
        except OSError:
            continue
        if mode & 0o077:
            loose.append((path, stat_mode(mode)))
    return loose


def stat_mode(mode: int) -> int:
    return mode & 0o777


def tool_forms_file() -> Path:
    """Which servers' models call tools, as found out by asking once (toolform.py)."""
    return data_dir() / "tool-forms.json"
