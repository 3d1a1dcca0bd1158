"""llama.cpp's own log lines go to omoide's log file, never to the terminal.

The engine (llama.cpp's server, in this process) writes its log through the C
library's `stderr` stream from a thread of its own, and has no callback to
hand the lines over. Moving file descriptor 2 would move Python's stderr too,
and with it the TUI, which Textual draws on stderr. So only the C stream is
pointed elsewhere: `stderr` (the `FILE *` that C code writes through) becomes
the write end of a pipe, and a reader thread hands each line to the logging
module as logger `llama_cpp`, whose handler is the log file. Python's own
stderr, the terminal's descriptor 2, is left as it was.

Where the C library does not expose its `stderr` stream by a name this module
knows (glibc, musl: `stderr`; macOS: `__stderrp`), the engine is told to log
nothing (see `engine.py`), so it still never prints on the terminal.
"""

from __future__ import annotations

import ctypes
import logging
import os
import re
import threading

log = logging.getLogger("llama_cpp")
# Where no log file is set up (a library user, a script), logging's last resort
# would print warnings to stderr: exactly what this module is here to prevent.
log.addHandler(logging.NullHandler())

_LINE = re.compile(r"^[\d.]+ ([DIWE]) (.*)$")
_ESCAPES = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|[\x00-\x08\x0b-\x1f\x7f]")
"""Colour codes (llama.cpp colours its log when the terminal is a tty) and other control characters."""
"""llama.cpp's line: its clock, a level letter, the text."""
# llama.cpp's INFO is dozens of lines per model load and a few per reply: kept
# out of the file at the default level.
_LEVELS = {"D": logging.DEBUG, "I": logging.DEBUG, "W": logging.WARNING, "E": logging.ERROR}
_STREAM_NAMES = ("stderr", "__stderrp")
_LINE_BUFFERED = 1  # _IOLBF


class _Route:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.routed: bool | None = None
        """None until tried; then whether the C stream now reaches the log."""


_route = _Route()


def relay(line: str) -> None:
    """Log one line the engine wrote."""
    line = _ESCAPES.sub("", line).rstrip()
    if not line:
        return
    match = _LINE.match(line)
    level, text = (_LEVELS[match.group(1)], match.group(2)) if match else (logging.INFO, line)
    log.log(level, "%s", text)


def _read(fd: int) -> None:
    pending = b""
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            return
        if not chunk:
            return
        pending += chunk
        *lines, pending = pending.split(b"\n")
        for raw in lines:
            relay(raw.decode("utf-8", errors="replace"))


def route_engine_logs() -> bool:
    """Point the C library's stderr stream at the log (once per process).
    True when it is routed; False when this C library does not allow it."""
    with _route.lock:
        if _route.routed is not None:
            return _route.routed
        _route.routed = False
        try:
            libc = ctypes.CDLL(None)
        except OSError:
            return False
        stream = None
        for name in _STREAM_NAMES:
            try:
                stream = ctypes.c_void_p.in_dll(libc, name)
                break
            except ValueError:
                continue
        if stream is None:
            return False
        libc.fdopen.restype = ctypes.c_void_p
        libc.fdopen.argtypes = [ctypes.c_int, ctypes.c_char_p]
        libc.setvbuf.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_size_t]
        read_end, write_end = os.pipe()
        replacement = libc.fdopen(write_end, b"w")
        if not replacement:
            os.close(read_end)
            os.close(write_end)
            return False
        libc.setvbuf(replacement, None, _LINE_BUFFERED, 0)
        threading.Thread(target=_read, args=(read_end,), name="omoide-engine-log", daemon=True).start()
        stream.value = replacement
        _route.routed = True
        return True
