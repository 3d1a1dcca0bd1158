"""Logging to a file in the log directory. Settings are never logged, so the
API key cannot reach the log. A log that cannot be written (a full disk, a
folder made read-only) never breaks or clutters a command: the failure is
kept for `omoide doctor` to report."""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from logging.handlers import RotatingFileHandler

from omoide import locations

_failure: list[str] = []
"""Why the log could not be written, the first time it could not (at most one)."""


def _remember(exc: BaseException | None) -> None:
    if not _failure:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc or "unknown error")
        _failure.append(reason)


class PrivateRotatingFileHandler(RotatingFileHandler):
    """Every log file, rotated ones included, is created readable by the user only."""

    def _open(self):  # type: ignore[no-untyped-def]
        locations.private_file(Path(self.baseFilename))
        return super()._open()

    def handleError(self, record: logging.LogRecord) -> None:  # noqa: N802 - logging's name
        """Quiet, unlike logging's own (a traceback on stderr for every line not written)."""
        _remember(sys.exc_info()[1])


def log_failure() -> str | None:
    """Why the log could not be written in this process, or None if it could."""
    return _failure[0] if _failure else None


def setup_logging(level: int = logging.INFO) -> None:
    root = logging.getLogger()
    if any(getattr(h, "_omoide", False) for h in root.handlers):
        return
    try:
        path = locations.log_file()
        locations.private_dir(path.parent)
        handler: logging.Handler = PrivateRotatingFileHandler(path, maxBytes=2_000_000, backupCount=3, encoding="utf-8")
    except OSError as exc:
        _remember(exc)
        handler = logging.NullHandler()
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler._omoide = True  # type: ignore[attr-defined]
    root.addHandler(handler)
    root.setLevel(level)
    for noisy in ("httpx", "httpcore", "aiosqlite"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
