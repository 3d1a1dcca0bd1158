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
    assert "omoide.chat.session" in modules and "omoide.cli.app" in modules
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
    code = "import sys, omoide.cli.app; print('xllamacpp' in sys.modules, 'textual' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.stdout.split() == ["False", "False"], result.stderr


def test_the_tui_reads_the_chat_only_through_the_session_and_its_navigator() -> None:
    """No module under omoide.tui imports omoide.store, names `Store`, or reaches for a `.store`."""
    import ast
    from pathlib import Path

    tui = Path(omoide.__file__).parent / "tui"
    files = sorted(tui.rglob("*.py"))
    assert any(f.name == "transcript.py" for f in files) and any(f.name == "chats.py" for f in files)
    found = []
    for path in files:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            line = f"{path.relative_to(tui.parent)}:{getattr(node, 'lineno', '?')}"
            if isinstance(node, ast.Import) and any(a.name.startswith("omoide.store") for a in node.names):
                found.append(f"{line} imports omoide.store")
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("omoide.store"):
                found.append(f"{line} imports from omoide.store")
            elif isinstance(node, ast.ImportFrom) and node.module == "omoide" and any(a.name == "store" for a in node.names):
                found.append(f"{line} imports omoide.store")
            elif isinstance(node, ast.Name) and node.id == "Store":
                found.append(f"{line} names Store")
            elif isinstance(node, ast.Attribute) and node.attr == "store":
                found.append(f"{line} uses .store")
    assert not found, "\n".join(found)
