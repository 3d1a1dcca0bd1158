"""Shared fixtures. Every test runs with OMOIDE_HOME in a fresh temp directory,
so nothing touches the real user's config or data."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def omoide_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "omoide-home"
    monkeypatch.setenv("OMOIDE_HOME", str(home))
    for var in ("OMOIDE_BASE_URL", "OMOIDE_MODEL", "OMOIDE_API_KEY", "OMOIDE_BACKEND", "OMOIDE_CONFIG"):
        monkeypatch.delenv(var, raising=False)
    return home


import os  # noqa: E402
import socket  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import httpx  # noqa: E402


@pytest.fixture
async def fault_server():
    from tests.faultserver import FaultServer

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
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def llama_server(smollm2_path: Path, tmp_path_factory: pytest.TempPathFactory):
    """A real OpenAI-compatible server: llama-cpp-python's, with the shipped SmolLM2."""
    port = _free_port()
    log = tmp_path_factory.mktemp("llama") / "server.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "llama_cpp.server", "--model", str(smollm2_path), "--host", "127.0.0.1",
             "--port", str(port), "--model_alias", "smollm2", "--n_ctx", "2048", "--chat_format", "chatml-function-calling", "--n_threads", "2"],
            stdout=out, stderr=subprocess.STDOUT, env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
    base = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"llama_cpp.server exited: {log.read_text()[-2000:]}")
        try:
            if httpx.get(f"{base}/models", timeout=2).status_code == 200:
                break
        except httpx.HTTPError:
            time.sleep(0.5)
    else:
        proc.terminate()
        pytest.fail("llama_cpp.server did not start within 120 s")
    yield base
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
