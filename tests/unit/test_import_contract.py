"""The headless core never imports Textual: only omoide.tui may."""

from __future__ import annotations

import pkgutil
import subprocess
import sys

import omoide


def core_modules() -> list[str]:
    names = [m.name for m in pkgutil.walk_packages(omoide.__path__, "omoide.")]
    return [n for n in names if not n.startswith("omoide.tui")]


def test_no_module_outside_tui_imports_textual() -> None:
    modules = core_modules()
    assert "omoide.session" in modules and "omoide.cli" in modules
    code = (
        "import importlib, sys\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        "    assert 'textual' not in sys.modules, name\n"
        "print('ok')\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


def test_the_cli_starts_without_loading_the_model_runtime() -> None:
    code = "import sys, omoide.cli; print('llama_cpp' in sys.modules, 'textual' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.stdout.split() == ["False", "False"], result.stderr
