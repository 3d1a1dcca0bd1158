"""No import cycles among omoide's modules, nor among its packages, and every
import runs down the stack of layers `docs/architecture.md` draws.

Every import statement counts, wherever it is written: at the top, inside a
function (a lazy import that dodges a cycle still is one), or under
TYPE_CHECKING. A package's `__init__` is only a dependency when it is what is
imported (`from omoide.store import Store`), not when a submodule is
(`from omoide.store import rows`).
"""

from __future__ import annotations

import ast
import pkgutil
from pathlib import Path

import omoide

def modules() -> dict[str, Path]:
    found = {"omoide": Path(omoide.__file__)}
    for info in pkgutil.walk_packages(omoide.__path__, "omoide."):
        spec = info.module_finder.find_spec(info.name, None)  # type: ignore[call-arg]
        assert spec is not None and spec.origin is not None, info.name
        found[info.name] = Path(spec.origin)
    return found


def resolve(name: str, known: dict[str, Path]) -> str | None:
    """The omoide module `name` stands for: itself, or the nearest enclosing module."""
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def imports_of(module: str, path: Path, known: dict[str, Path]) -> set[str]:
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{anchor}.{base}" if base else anchor
            # `from pkg import sub` imports the submodule when there is one.
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names]
        else:
            continue
        for target in targets:
            if target == "omoide" or target.startswith("omoide."):
                resolved = resolve(target, known)
                if resolved is not None and resolved != module:
                    found.add(resolved)
    return found


def graph() -> dict[str, set[str]]:
    known = modules()
    return {name: imports_of(name, path, known) for name, path in known.items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """One cycle per back edge found by a depth-first search, as the module path around it."""
    found: list[list[str]] = []
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                found.append([*stack[stack.index(nxt):], nxt])
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(edges):
        if node not in state:
            visit(node)
    return found


def test_the_cycle_finder_finds_a_cycle_hidden_in_a_function_and_under_type_checking(tmp_path: Path) -> None:
    a, b, c = tmp_path / "a.py", tmp_path / "b.py", tmp_path / "c.py"
    a.write_text("def f():\n    from omoide.b import g\n")
    b.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from omoide import c\n")
    c.write_text("import omoide.a\n")
    known = {"omoide.a": a, "omoide.b": b, "omoide.c": c}
    edges = {name: imports_of(name, path, known) for name, path in known.items()}
    assert edges == {"omoide.a": {"omoide.b"}, "omoide.b": {"omoide.c"}, "omoide.c": {"omoide.a"}}
    assert cycles(edges) == [["omoide.a", "omoide.b", "omoide.c", "omoide.a"]]
    assert cycles({"omoide.a": {"omoide.b"}, "omoide.b": set()}) == []


def test_relative_imports_resolve_to_the_module_they_name(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from . import x\nfrom .y import thing\n")
    (pkg / "x.py").write_text("from .. import top\nfrom . import y\n")
    (pkg / "y.py").write_text("")
    (tmp_path / "top.py").write_text("")
    known = {"omoide.pkg": pkg / "__init__.py", "omoide.pkg.x": pkg / "x.py", "omoide.pkg.y": pkg / "y.py",
             "omoide.top": tmp_path / "top.py"}
    assert imports_of("omoide.pkg", known["omoide.pkg"], known) == {"omoide.pkg.x", "omoide.pkg.y"}
    assert imports_of("omoide.pkg.x", known["omoide.pkg.x"], known) == {"omoide.top", "omoide.pkg.y"}


LAYERS: list[set[str]] = [
    {"__main__"},
    {"launch"},
    {"cli"},
    {"tui", "check"},
    {"chat"},
    {"scene"},
    {"world"},
    {"memory"},
    {"llm", "exchange"},
    {"models", "characters", "store"},
    {"config"},
    {"domain", "errors", "locations", "safe_text", "bounded_http", "startup"},
]
"""From the top down. A package (or top-level module) imports only from the
layers below its own: never up, and never sideways within its layer."""


def unit(module: str) -> str:
    """The package (or top-level module) `module` belongs to."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "omoide"


def package_edges(edges: dict[str, set[str]]) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for module, targets in edges.items():
        for target in targets:
            if unit(module) != unit(target) and unit(target) != "omoide":
                found.setdefault(unit(module), set()).add(unit(target))
    return found


def layer_of(name: str) -> int:
    return next(i for i, layer in enumerate(LAYERS) if name in layer)


def test_the_package_check_finds_a_cycle_and_an_import_up_the_stack() -> None:
    edges = {"omoide.store.world": {"omoide.world.model"}, "omoide.world.keeper": {"omoide.store"}}
    assert package_edges(edges) == {"store": {"world"}, "world": {"store"}}
    assert cycles(package_edges(edges)) == [["store", "world", "store"]]
    assert layer_of("store") > layer_of("world")  # store -> world runs up the stack


def test_every_package_has_a_layer_and_few_modules_sit_at_the_top() -> None:
    root = Path(omoide.__file__).parent
    top = [p for p in root.glob("*.py")]
    units = {p.stem for p in top if p.stem != "__init__"}
    units |= {p.name for p in root.iterdir() if (p / "__init__.py").exists()}
    assert units - set().union(*LAYERS) == set(), "give these a layer in LAYERS and in docs/architecture.md"
    assert len(top) <= 8, f"at most 8 modules at the top of src/omoide, not {sorted(p.name for p in top)}"


def test_packages_import_only_down_the_stack_and_never_in_a_cycle() -> None:
    edges = package_edges(graph())
    assert edges["chat"] >= {"memory", "store"} and "chat" in edges["tui"]
    found = cycles(edges)
    assert not found, "import cycles between packages:\n" + "\n".join(" -> ".join(c) for c in found)
    upward = sorted(f"{a} -> {b}" for a, targets in edges.items() for b in targets if layer_of(b) <= layer_of(a))
    assert not upward, "imports that do not run down the stack:\n" + "\n".join(upward)


def test_no_import_cycles_among_omoide_modules() -> None:
    edges = graph()
    assert "omoide.chat.session" in edges and "omoide.store" in edges["omoide.chat.session"]
    # The slash-command handlers know the app only through tui.host.Host.
    assert "omoide.tui.app" not in edges["omoide.tui.commands"]
    found = cycles(edges)
    assert not found, "import cycles:\n" + "\n".join(" -> ".join(c) for c in found)
