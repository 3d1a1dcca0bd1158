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
