"""llama.cpp's own log lines go to omoide's log file, never to the terminal.

llama.cpp prints through one process-wide callback; llama-cpp-python's writes
some lines to stderr even with verbose=False (`llama_kv_cache_iswa: using
full-size SWA cache …` for Gemma 3), where they land in the middle of the TUI
or of `omoide say`'s output. This callback hands every line to the logging
module instead, as logger `llama_cpp`, whose handler is the log file.
"""

from __future__ import annotations

import logging
import threading

from omoide.llm import llama_adapter

log = logging.getLogger("llama_cpp")
# Where no log file is set up (a library user, a script), logging's last resort
# would print warnings to stderr: exactly what this module is here to prevent.
log.addHandler(logging.NullHandler())

# ggml_log_level: NONE 0, DEBUG 1, INFO 2, WARN 3, ERROR 4, CONT 5 (continues the previous line).
# llama.cpp's INFO is a hundred lines per model load: kept out of the file at the default level.
_LEVELS = {0: logging.INFO, 1: logging.DEBUG, 2: logging.DEBUG, 3: logging.WARNING, 4: logging.ERROR}


class _Relay:
    def __init__(self) -> None:
        self.level = logging.DEBUG
        self.pending = ""
        self.callback: object = None
        self.lock = threading.Lock()

    def __call__(self, level: int, text: bytes) -> None:
        with self.lock:
            if level != 5:
                self.level = _LEVELS.get(level, logging.INFO)
            self.pending += text.decode("utf-8", errors="replace")
            if not self.pending.endswith("\n"):
                return
            line, self.pending, level = self.pending.rstrip(), "", self.level
        if line:
            log.log(level, "%s", line)


_relay = _Relay()


def route_llama_logs() -> None:
    """Install the relay (once per process)."""
    with _relay.lock:
        if _relay.callback is None:
            _relay.callback = llama_adapter.set_log_callback(_relay)
