"""Lorebooks as other programs write them: a card's `character_book` (V2/V3)
and SillyTavern's world-info files. Parsing raises ValueError with the
problem; callers turn it into a CharacterError naming the file."""

from __future__ import annotations

import copy
import math
from typing import Any

from omoide.characters.model import LoreEntry, Lorebook


def text(data: dict[str, Any], key: str, where: str = "") -> str:
    value = data.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ValueError(f"{where}'{key}' must be text, not {_kind(value)}")
    return value


def texts(data: dict[str, Any], key: str, where: str = "") -> list[str]:
    value = data.get(key)
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{where}'{key}' must be a list of texts")
    return list(value)


def flag(data: dict[str, Any], key: str, default: bool, where: str = "") -> bool:
    value = data.get(key)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise ValueError(f"{where}'{key}' must be true or false, not {_kind(value)}")
    return value


def whole_number(data: dict[str, Any], key: str, default: int, where: str = "") -> int:
    value = data.get(key)
    if value is None:
        return default
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    if not isinstance(value, int) or isinstance(value, bool):
        raise ValueError(f"{where}'{key}' must be a whole number, not {_kind(value)}")
    return value


def mapping(data: dict[str, Any], key: str, where: str = "") -> dict[str, Any]:
    value = data.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ValueError(f"{where}'{key}' must be an object, not {_kind(value)}")
    return copy.deepcopy(value)


def _kind(value: Any) -> str:
    return {str: "text", bool: "true/false", int: "a number", float: "a number", list: "a list", dict: "an object"}.get(
        type(value), type(value).__name__
    )


_DEFAULT = Lorebook()


def lorebook_from_card(book: Any) -> Lorebook | None:
    """A card's `character_book` (the same shape in V2 and V3)."""
    if book is None:
        return None
    if not isinstance(book, dict):
        raise ValueError(f"'character_book' must be an object, not {_kind(book)}")
    entries = book.get("entries", [])
    if not isinstance(entries, list):
        raise ValueError("'character_book.entries' must be a list")
    result = Lorebook(
        name=text(book, "name", "character_book: "),
        scan_depth=whole_number(book, "scan_depth", _DEFAULT.scan_depth, "character_book: "),
        token_budget=whole_number(book, "token_budget", 0, "character_book: ") if book.get("token_budget") is not None else None,
        recursive_scanning=flag(book, "recursive_scanning", False, "character_book: "),
        extensions=mapping(book, "extensions", "character_book: "),
    )
    for i, raw in enumerate(entries):
        where = f"lorebook entry {i}: "
        if not isinstance(raw, dict):
            raise ValueError(f"lorebook entry {i} is not an object")
        entry_id = raw.get("id")
        result.entries.append(LoreEntry(
            keys=texts(raw, "keys", where),
            content=text(raw, "content", where),
            secondary_keys=texts(raw, "secondary_keys", where),
            selective=flag(raw, "selective", False, where),
            case_sensitive=flag(raw, "case_sensitive", False, where),
            use_regex=flag(raw, "use_regex", False, where),
            constant=flag(raw, "constant", False, where),
            enabled=flag(raw, "enabled", True, where),
            insertion_order=whole_number(raw, "insertion_order", 100, where),
            priority=whole_number(raw, "priority", 10, where),
            name=text(raw, "name", where) or (raw["comment"] if isinstance(raw.get("comment"), str) else ""),
            id=entry_id if isinstance(entry_id, int) and not isinstance(entry_id, bool) else None,
            extensions=mapping(raw, "extensions", where),
            position=raw["position"] if isinstance(raw.get("position"), str) else "",
        ))
    return result


def lorebook_to_card(book: Lorebook, original: Any = None) -> dict[str, Any]:
    """The `character_book` object, built over the original one so the fields
    omoide does not know (position, comment, ...) stay where they were."""
    out = copy.deepcopy(original) if isinstance(original, dict) else {}
    out.update({"name": book.name, "scan_depth": book.scan_depth,
                "recursive_scanning": book.recursive_scanning, "extensions": copy.deepcopy(book.extensions)})
    if book.token_budget is not None:
        out["token_budget"] = book.token_budget
    else:
        out.pop("token_budget", None)
    old = [e for e in out.get("entries", []) if isinstance(e, dict)] if isinstance(out.get("entries"), list) else []
    by_id = {e["id"]: e for e in old if isinstance(e.get("id"), int)}
    entries = []
    for i, entry in enumerate(book.entries):
        # The original entry: the one with the same id, else the one in the same place.
        before = by_id.get(entry.id) if entry.id is not None else None
        if before is None and i < len(old) and (entry.id is None or not isinstance(old[i].get("id"), int)):
            before = old[i]
        raw = copy.deepcopy(before) if before is not None else {}
        raw.update({
            "keys": list(entry.keys), "content": entry.content, "extensions": copy.deepcopy(entry.extensions),
            "enabled": entry.enabled, "insertion_order": entry.insertion_order, "case_sensitive": entry.case_sensitive,
            "use_regex": entry.use_regex, "priority": entry.priority, "selective": entry.selective,
            "secondary_keys": list(entry.secondary_keys), "constant": entry.constant,
        })
        if entry.name:
            raw["name"] = entry.name
        if entry.position:
            raw["position"] = entry.position
        if entry.id is not None:
            raw["id"] = entry.id
        entries.append(raw)
    out["entries"] = entries
    return out


def _st_keys(raw: dict[str, Any], key: str, where: str) -> list[str]:
    value = raw.get(key)
    if isinstance(value, str):  # old SillyTavern versions kept keys as one comma-separated text
        return [k.strip() for k in value.split(",") if k.strip()]
    return texts(raw, key, where)


_ST_KNOWN = {"uid", "key", "keysecondary", "comment", "content", "constant", "selective", "order", "disable", "caseSensitive"}


def lorebook_from_world_info(data: Any, name: str = "") -> Lorebook:
    """SillyTavern's world-info JSON: `{"entries": {"0": {key, keysecondary,
    content, constant, selective, order, disable, ...}}}`. Fields with no
    counterpart (position, depth, probability, ...) are kept in extensions,
    where lore_rules.py reads them. Recursive scanning is on, as SillyTavern
    ships it (its settings' world_info_recursive)."""
    if not isinstance(data, dict) or not isinstance(data.get("entries"), dict):
        raise ValueError("it is not a world-info file ('entries' must be an object)")
    book = Lorebook(name=name if not isinstance(data.get("name"), str) else data["name"], recursive_scanning=True)
    for uid, raw in data["entries"].items():
        where = f"entry {uid}: "
        if not isinstance(raw, dict):
            raise ValueError(f"entry {uid} is not an object")
        entry_id = raw.get("uid")
        book.entries.append(LoreEntry(
            keys=_st_keys(raw, "key", where),
            content=text(raw, "content", where),
            secondary_keys=_st_keys(raw, "keysecondary", where),
            selective=flag(raw, "selective", False, where),
            case_sensitive=flag(raw, "caseSensitive", False, where),
            constant=flag(raw, "constant", False, where),
            enabled=not flag(raw, "disable", False, where),
            insertion_order=whole_number(raw, "order", 100, where),
            name=text(raw, "comment", where),
            id=entry_id if isinstance(entry_id, int) and not isinstance(entry_id, bool) else None,
            extensions={k: copy.deepcopy(v) for k, v in raw.items() if k not in _ST_KNOWN},
        ))
    return book
