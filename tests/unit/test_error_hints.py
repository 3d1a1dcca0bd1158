"""Every error omoide raises says what to do: no OmoideError is built in the
source without a hint, or with an empty one."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

import omoide
from omoide import errors

SOURCE = Path(omoide.__file__).parent


def error_names() -> set[str]:
    """OmoideError and every subclass defined anywhere in the package."""
    names = {name for name, obj in vars(errors).items() if inspect.isclass(obj) and issubclass(obj, errors.OmoideError)}
    for path in SOURCE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and any(isinstance(b, ast.Name) and b.id in names for b in node.bases):
                names.add(node.name)
    return names


def test_every_error_built_in_the_source_has_a_hint() -> None:
    names = error_names()
    missing = []
    for path in sorted(SOURCE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            if name not in names:
                continue
            hint = node.args[1] if len(node.args) > 1 else next((k.value for k in node.keywords if k.arg == "hint"), None)
            if hint is None or (isinstance(hint, ast.Constant) and not str(hint.value).strip()):
                missing.append(f"{path.relative_to(SOURCE)}:{node.lineno} {ast.unparse(node)[:90]}")
    assert "ChatFileError" in names and "CommandError" in names
    assert missing == [], "errors without a hint:\n" + "\n".join(missing)


def test_an_error_cannot_be_made_without_a_hint() -> None:
    with pytest.raises(TypeError):
        errors.CommandError("Something went wrong.")  # type: ignore[call-arg]
