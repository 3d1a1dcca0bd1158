"""`[ui.keymap]` checked: every binding id it names must be one of omoide's keys,
and every key name a plain key name. An unknown id (a typo such as
`chat.nonsense`) would otherwise be ignored without a word, and a key name
holding an escape sequence would be written to the terminal wherever keys are
shown (/help, the palette). The chat starts with the usable entries and a
warning naming the rest; `omoide doctor` names them too.

BINDING_IDS is every binding id of the chat's screens (a test keeps it equal to
the ids the TUI declares: this package may not import the TUI)."""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections.abc import Mapping

from omoide.safe_text import oneline

BINDING_IDS = frozenset({
    "app.quit", "branches.close", "characters.close", "characters.import", "chat.bottom", "chat.branches",
    "chat.characters", "chat.diary", "chat.history_next", "chat.history_prev", "chat.list", "chat.memos",
    "chat.mouse", "chat.newline", "chat.page_down", "chat.page_up", "chat.palette", "chat.prompt", "chat.select",
    "chat.send", "chat.stop", "chat.swipe_next", "chat.swipe_prev", "chat.top", "chats.archive", "chats.close",
    "chats.new", "chats.open", "chats.rename", "chats.show_archived", "editor.end", "editor.select_end",
    "editor.select_start", "editor.start", "first_run.later", "help.close", "import.cancel", "input.cancel",
    "inspector.bottom", "inspector.close", "inspector.page_down", "inspector.page_up", "inspector.top", "log.close",
    "memo_editor.cancel", "memo_editor.save", "memos.close", "memos.edit", "memos.hide", "memos.new", "memos.retry",
    "message.branch", "message.copy", "message.delete", "message.edit", "message.leave", "message.next",
    "message.previous", "message.regenerate", "message_editor.cancel", "message_editor.save", "modal.close",
    "models.close", "profile.accept", "profile.close", "profile.reject", "profile.save", "search.close",
    "world.cancel", "world.close", "world.save",
})

_KEY = re.compile(r"^[a-z0-9_+\-]{1,40}$", re.IGNORECASE)
"""A key as Textual names it: 'ctrl+d', 'f5', 'shift+enter', 'question_mark', 'x'."""
_MAX_KEYS = 8


def _bad_key(keys: str) -> str | None:
    """What is wrong with a binding's keys ('f5' or 'ctrl+k,f6'), None when nothing is."""
    if any(unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp") for c in keys):
        return "holds control characters (an escape sequence?)"
    names = [k.strip() for k in keys.split(",")]
    if not keys.strip() or len(names) > _MAX_KEYS:
        return f"is not a list of 1 to {_MAX_KEYS} keys"
    if wrong := [k for k in names if not _KEY.match(k)]:
        return f"names '{oneline(wrong[0], 40)}', which is not a key name (keys are written like ctrl+d, f5, shift+enter)"
    return None


def keymap_problems(keymap: Mapping[str, str]) -> list[str]:
    """One sentence for each entry of the keymap that omoide does not use, and why."""
    problems = []
    for binding_id, keys in keymap.items():
        shown = oneline(binding_id, 60)
        if binding_id not in BINDING_IDS:
            close = difflib.get_close_matches(binding_id, sorted(BINDING_IDS), n=1, cutoff=0.8)
            hint = f" Did you mean '{close[0]}'?" if close else " docs/keys.md lists the ids."
            problems.append(f"[ui.keymap] '{shown}' is not a key of omoide; it is ignored.{hint}")
        elif (why := _bad_key(keys)) is not None:
            problems.append(f"[ui.keymap] '{shown}': the key {why}; it is ignored.")
    return problems


def usable_keymap(keymap: Mapping[str, str]) -> dict[str, str]:
    """The entries of `keymap` that name an id omoide has and plain key names."""
    return {binding_id: keys for binding_id, keys in keymap.items()
            if binding_id in BINDING_IDS and _bad_key(keys) is None}
