"""Prints the settings tables of docs/configuration.md from the sections'
fields and docstrings: `python docs/settings_table.py`."""

from __future__ import annotations

import ast
import inspect

import omoide.config.sections as sections
from omoide.config.fields import fields_of


def docstrings() -> dict[tuple[str, str], str]:
    found = {}
    for node in ast.parse(inspect.getsource(sections)).body:
        if isinstance(node, ast.ClassDef):
            for stmt, after in zip(node.body, node.body[1:]):
                if (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and isinstance(after, ast.Expr)
                        and isinstance(after.value, ast.Constant) and isinstance(after.value.value, str)):
                    found[(node.name, stmt.target.id)] = " ".join(after.value.value.split())
    return found


def default(value: object) -> str:
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, str):
        return f'"{value}"'
    return "{}" if isinstance(value, dict) else str(value)


def main() -> None:
    docs = docstrings()
    for section in sections.SECTIONS:
        print(f"### [{section.NAME}]\n\n{' '.join((section.__doc__ or '').split())}\n")
        print("| key | default | variable | what it does |\n| --- | --- | --- | --- |")
        for name, field in fields_of(section).items():
            key = sections.IDS.get((section.NAME, name), name)
            choices = f" One of {', '.join(field.choices)}." if field.choices else ""
            text = docs.get((section.__name__, name), "").replace("|", "/")
            print(f"| `{name}` | `{default(field.default)}` | `OMOIDE_{key.upper()}` | {text}{choices} |")
        print()


if __name__ == "__main__":
    main()
