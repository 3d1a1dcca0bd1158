"""Logging to a file in the log directory. Settings are never logged, so the
API key cannot reach the log."""

from __future__ import annotations

import logging
from pathlib import Path
from logging.handlers import RotatingFileHandler

from omoide import locations


class PrivateRotatingFileHandler(RotatingFileHandler):
    """Every log file, rotated ones included, is created readable by the user only."""

    def _open(self):  # type: ignore[no-untyped-def]
        locations.private_file(Path(self.baseFilename))
        return super()._open()


def setup_logging(level: int = logging.INFO) -> None:
    root = logging.getLogger()
    if any(getattr(h, "_omoide", False) for h in root.handlers):
        return
    try:
        path = locations.log_file()
        locations.private_dir(path.parent)
        handler: logging.Handler = PrivateRotatingFileHandler(path, maxBytes=2_000_000, backupCount=3, encoding="utf-8")
    except OSError:
        handler = logging.NullHandler()
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler._omoide = True  # type: ignore[attr-defined]
    root.addHandler(handler)
    root.setLevel(level)
    for noisy in ("httpx", "httpcore", "aiosqlite"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
