"""Every package omoide's code imports is one pyproject.toml asks pip for: a
module that only arrives through another package's dependencies (click did,
through llama-cpp-python's server, until typer stopped needing it) breaks the
first command on a fresh install."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from pathlib import Path

import omoide

ROOT = Path(omoide.__file__).parent
DISTRIBUTIONS = {
    "aiosqlite": "aiosqlite", "httpx": "httpx", "markdown_it": "markdown-it-py", "platformdirs": "platformdirs",
    "re2": "google-re2", "rich": "rich", "textual": "textual", "typer": "typer", "PIL": "pillow",
}
"""Import name -> the distribution that provides it, where the two differ or it is worth saying."""


def imported_modules() -> set[str]:
    found: set[str] = set()
    for path in ROOT.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                found.add(node.module.split(".")[0])
    return {m for m in found if m not in sys.stdlib_module_names and m not in ("omoide", "__future__")}


def declared() -> set[str]:
    project = tomllib.loads((ROOT.parents[1] / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    names = [*project["dependencies"], *(d for extra in project["optional-dependencies"].values() for d in extra)]
    return {re.split(r"[\s\[<>=!~;]", name, maxsplit=1)[0].lower() for name in names}


def test_every_imported_package_is_a_declared_dependency() -> None:
    wanted = {module: DISTRIBUTIONS.get(module, module.replace("_", "-")) for module in imported_modules()}
    assert {"textual", "typer", "httpx"} <= set(wanted)
    missing = sorted(f"{module} (from {dist})" for module, dist in wanted.items() if dist.lower() not in declared())
    assert not missing, f"imported but not declared in pyproject.toml: {', '.join(missing)}"
