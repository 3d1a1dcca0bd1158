"""config/keymap.py's list of binding ids is the TUI's (config may not import the TUI)."""

from __future__ import annotations

import ast
from pathlib import Path

import omoide
from omoide.config.keymap import BINDING_IDS, keymap_problems, usable_keymap


def declared_ids() -> set[str]:
    ids = set()
    for path in (Path(omoide.__file__).parent / "tui").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Binding":
                ids |= {k.value.value for k in node.keywords if k.arg == "id" and isinstance(k.value, ast.Constant)}
    return ids


def test_the_keymap_knows_every_binding_id_of_the_tui_and_no_other() -> None:
    assert "chat.diary" in declared_ids() and "message.edit" in declared_ids()
    assert BINDING_IDS == declared_ids()


def test_unknown_ids_and_hostile_keys_are_named_and_left_out() -> None:
    keymap = {"chat.diary": "f5", "chat.dairy": "f6", "chat.prompt": "\x1b]0;x\x07", "chat.list": "ctrl+l,f7",
              "chat.memos": "ctrl + o", "chat.top": ""}
    problems = keymap_problems(keymap)
    assert "[ui.keymap] 'chat.dairy' is not a key of omoide; it is ignored. Did you mean 'chat.diary'?" in problems
    assert any("'chat.prompt': the key holds control characters" in p for p in problems)
    assert any("'chat.memos': the key names 'ctrl + o'" in p for p in problems)
    assert any("'chat.top'" in p for p in problems) and len(problems) == 4
    assert usable_keymap(keymap) == {"chat.diary": "f5", "chat.list": "ctrl+l,f7"}
