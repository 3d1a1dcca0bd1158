"""A damaged write-ahead log, found before SQLite reads it.

SQLite replays the WAL when a database is opened after a crash, and stops at
the first frame whose checksum is wrong: what that frame and every frame after
it held is dropped without a word, the integrity check stays "ok", and at the
next checkpoint the log is reset, so nothing shows it ever happened. Here the
log is read first (only when one is left over, which a clean exit never does):
frames of its current generation (their salts match the header's) that fail
their checksum are frames SQLite will not recover. Then the log is copied aside
(`omoide.db-wal.damaged-<time>`, private) before SQLite touches it, and the
finding is said at open and by `omoide doctor` for as long as that copy is there.

The format (https://www.sqlite.org/fileformat.html, "The Write-Ahead Log"): a
32-byte header, then frames of a 24-byte header and a page each; checksums are
cumulative, over 32-bit words in the byte order the header's magic names."""

from __future__ import annotations

import logging
import os
import struct
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

log = logging.getLogger(__name__)

MAGIC = (0x377F0682, 0x377F0683)
HEADER = 32
FRAME_HEADER = 24
MAX_READ = 256 * 1024 * 1024
"""A log larger than this is not read (SQLite checkpoints at about 4 MB)."""
SUFFIX = "-wal.damaged-"

found_now: list[str] = []
"""What was found damaged in this process (its copy is also kept), for the CLI to say after the command."""


@dataclass(frozen=True, slots=True)
class WalDamage:
    frames: int
    """Frames of the log's current generation."""
    readable: int
    """Frames SQLite replays (the valid prefix)."""
    commits_lost: int
    """Committed transactions among the frames it drops (their commit marks are still legible)."""
    header_bad: bool = False

    def sentence(self) -> str:
        if self.header_bad:
            return f"its header is damaged, so none of its {self.frames:,} frames could be read"
        lost = self.frames - self.readable
        commits = f", about {self.commits_lost:,} saved change(s)" if self.commits_lost else ""
        return f"SQLite could read {self.readable:,} of its {self.frames:,} frames; the other {lost:,}{commits} are not in the database"


def _checksum(data: memoryview, order: str, s0: int, s1: int) -> tuple[int, int]:
    words = struct.unpack(f"{order}{len(data) // 4}I", data)
    mask = 0xFFFFFFFF
    for i in range(0, len(words), 2):
        s0 = (s0 + words[i] + s1) & mask
        s1 = (s1 + words[i + 1] + s0) & mask
    return s0, s1


def inspect(data: bytes) -> WalDamage | None:
    """The damage in a WAL's bytes, None when SQLite will replay all of its current frames."""
    if len(data) < HEADER:
        return None
    magic, _version, page_size, _seq, salt1, salt2, c1, c2 = struct.unpack(">8I", data[:HEADER])
    if magic not in MAGIC or page_size < 512 or page_size > 65536 or page_size & (page_size - 1):
        return None  # not a log SQLite would read at all: SQLite ignores it the same way
    order = ">" if magic & 1 else "<"
    view = memoryview(data)
    size = FRAME_HEADER + page_size
    count = (len(data) - HEADER) // size
    frames = [(HEADER + i * size) for i in range(count)]
    ours = [at for at in frames if struct.unpack(">2I", data[at + 8:at + 16]) == (salt1, salt2)]
    s0, s1 = _checksum(view[:24], order, 0, 0)
    if (s0, s1) != (c1, c2):
        return WalDamage(len(ours), 0, 0, header_bad=True) if ours else None
    readable = 0
    for at in frames:
        if struct.unpack(">2I", data[at + 8:at + 16]) != (salt1, salt2):
            break
        s0, s1 = _checksum(view[at:at + 8], order, s0, s1)
        s0, s1 = _checksum(view[at + FRAME_HEADER:at + size], order, s0, s1)
        if (s0, s1) != struct.unpack(">2I", data[at + 16:at + 24]):
            break
        readable += 1
    after = frames[readable:]
    broken = [at for at in after if struct.unpack(">2I", data[at + 8:at + 16]) == (salt1, salt2)]
    if not broken:
        return None
    commits = sum(1 for at in broken if struct.unpack(">I", data[at + 4:at + 8])[0] != 0)
    if not commits:
        return None  # an unfinished transaction (a crash mid-write): never saved, so nothing lost
    return WalDamage(readable + len(broken), readable, commits)


def _read(path: Path) -> bytes | None:
    try:
        if path.stat().st_size <= HEADER or path.stat().st_size > MAX_READ:
            return None
        return path.read_bytes()
    except OSError:
        return None


def check_before_open(db: Path) -> str | None:
    """If `db`'s left-over WAL is damaged: keep a copy beside it and say what is lost."""
    wal = db.with_name(db.name + "-wal")
    data = _read(wal)
    if data is None:
        return None
    damage = inspect(data)
    if damage is None:
        return None
    time.sleep(0.2)  # another window may be writing the frame just read: a log still growing is not damage
    again = _read(wal)
    if again is None or again[:len(data)] != data or len(again) != len(data):
        return None
    copy = db.with_name(f"{db.name}{SUFFIX}{datetime.now():%Y%m%dT%H%M%S}")
    try:
        fd = os.open(copy, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as out:
            out.write(data)
    except OSError as exc:
        log.warning("the damaged WAL of %s could not be kept: %s", db, exc)
        text = f"The database's write-ahead log was damaged: {damage.sentence()}."
    else:
        text = f"The database's write-ahead log was damaged: {damage.sentence()}. The damaged log is kept at {copy}."
    log.warning("%s", text)
    found_now.append(text)
    return text


def kept_damage(db: Path) -> list[str]:
    """What each damaged log kept beside `db` says: said at every open until it is moved away."""
    found = []
    for copy in sorted(db.parent.glob(f"{db.name}{SUFFIX}*")):
        data = _read(copy)
        damage = inspect(data) if data is not None else None
        what = f": {damage.sentence()}" if damage is not None else ""
        found.append(f"The database's write-ahead log was found damaged{what}. The damaged log is kept at {copy}; "
                     "move it away once you have looked (what it lost cannot be put back by omoide).")
    return found
