"""No module under src/ is longer than the house keeps (400 lines): a module
that grows past it is split along what it does."""

from __future__ import annotations

from pathlib import Path

import omoide

LIMIT = 400

def lengths() -> dict[str, int]:
    root = Path(omoide.__file__).parent
    return {p.relative_to(root).as_posix(): len(p.read_text(encoding="utf-8").splitlines())
            for p in sorted(root.rglob("*.py"))}


def test_no_module_under_src_is_over_400_lines() -> None:
    found = lengths()
    assert len(found) > 100 and "chat/session.py" in found  # the walk really reads the source tree
    over = {name: n for name, n in found.items() if n > LIMIT}
    assert not over, "modules over 400 lines (split them along what they do):\n" + "\n".join(
        f"  src/omoide/{name}: {n} lines" for name, n in over.items())
