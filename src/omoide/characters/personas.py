"""Personas: who you are in a chat (your name and what the character knows of you).

The config file's `personas` table holds the ones you write yourself. Those
imported from SillyTavern live in the data directory, one folder each
(`personas/<id>/persona.toml`, and `avatar.png` when it came with one). A
persona of the config file wins over an imported one of the same name.

SillyTavern keeps personas in its settings.json under `power_user`: `personas`
maps each avatar file (in its "User Avatars" folder) to a name, and
`persona_descriptions` maps it to {description, position, depth, role,
title}; its Persona Management backup holds the same two maps at the top
level (docs: Usage/personas.md; public/scripts/personas.js).
"""

from __future__ import annotations

import json
import logging
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from omoide import locations
from omoide.characters import tomlwrite
from omoide.characters.cards import slugify
from omoide.characters.png import PNGError, read_chunks
from omoide.errors import CharacterError

log = logging.getLogger(__name__)
PERSONA_FILE = "persona.toml"
AVATAR_FILE = "avatar.png"
MAX_SETTINGS_BYTES = 50 * 1024 * 1024
MAX_AVATAR_BYTES = 20 * 1024 * 1024
MAX_PERSONA_BYTES = 20 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Persona:
    name: str
    description: str = ""
    title: str = ""
    avatar: Path | None = None
    folder: Path | None = None


@dataclass
class PersonaImport:
    imported: list[Persona] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    """Each persona not imported, with why."""
    notes: list[str] = field(default_factory=list)
    """Imported, but something did not come along (an avatar)."""


def load_personas(root: Path | None = None) -> list[Persona]:
    """The imported personas, by name; a folder that cannot be read is logged and skipped."""
    root = root or locations.personas_dir()
    if not root.is_dir():
        return []
    found: list[Persona] = []
    for folder in sorted(p for p in root.iterdir() if p.is_dir()):
        try:
            data = tomllib.loads(locations.read_regular(folder / PERSONA_FILE, MAX_PERSONA_BYTES).decode("utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            log.warning("skipping persona %s: %s", folder, exc)
            continue
        name, description = data.get("name"), data.get("description", "")
        if not isinstance(name, str) or not name.strip() or not isinstance(description, str):
            log.warning("skipping persona %s: it has no name", folder)
            continue
        title = data.get("title") if isinstance(data.get("title"), str) else ""
        avatar = folder / AVATAR_FILE
        found.append(Persona(name.strip(), description.strip(), str(title), avatar if avatar.is_file() else None, folder))
    return sorted(found, key=lambda p: p.name.casefold())


def _read_settings(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(locations.read_regular(path, MAX_SETTINGS_BYTES).decode("utf-8-sig"))
    except (locations.NotAFile, locations.FileTooLarge) as exc:
        raise CharacterError(f"Cannot read {path}: {exc.strerror}.", "Is this SillyTavern's settings.json?") from exc
    except OSError as exc:
        raise CharacterError(f"Cannot read {path}: {exc.strerror or exc}.", "Check the path.") from exc
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise CharacterError(f"Cannot read {path}: it is not valid JSON ({exc}).", "Point at SillyTavern's settings.json or a personas backup.") from exc
    if not isinstance(data, dict):
        raise CharacterError(f"Cannot read {path}: it is not a JSON object.", "Point at SillyTavern's settings.json or a personas backup.")
    inner = data.get("power_user")
    holder: dict[str, Any] = inner if isinstance(inner, dict) else data
    if not isinstance(holder.get("personas"), dict):
        raise CharacterError(
            f"{path} holds no SillyTavern personas (no power_user.personas, and no personas backup).",
            "SillyTavern keeps them in data/default-user/settings.json; Persona Management can also back them up.",
        )
    return holder


def _avatar(folder: Path | None, key: str) -> tuple[bytes | None, str]:
    """The avatar PNG's bytes, or why it did not come along."""
    if folder is None:
        return None, "no avatar folder was given"
    path = folder / key
    if Path(key).name != key or not path.is_file():
        return None, f"its avatar {key} is not in {folder}"
    try:
        data = locations.read_regular(path, MAX_AVATAR_BYTES)
        read_chunks(data)
    except (locations.NotAFile, locations.FileTooLarge) as exc:
        return None, f"its avatar {key}: {exc.strerror}"
    except OSError as exc:
        return None, f"its avatar {key} cannot be read ({exc.strerror or exc})"
    except PNGError as exc:
        return None, f"its avatar {key} is not a readable PNG ({exc})"
    return data, ""


def import_tavern_personas(path: Path, avatars: Path | None = None, *, root: Path | None = None,
                           existing: set[str] | None = None) -> PersonaImport:
    """Import SillyTavern's personas from its settings.json (or a personas
    backup); avatars are looked for in `avatars` (default: the "User Avatars"
    folder beside the file). Names already in use (`existing`, the imported
    ones) are refused, never overwritten."""
    root = root or locations.personas_dir()
    holder = _read_settings(path)
    kept = holder.get("persona_descriptions")
    descriptions: dict[str, Any] = kept if isinstance(kept, dict) else {}
    folder = avatars if avatars is not None else path.parent / "User Avatars"
    taken = {n.casefold() for n in (existing or set())} | {p.name.casefold() for p in load_personas(root)}
    report = PersonaImport()
    for key, name in holder["personas"].items():
        if not isinstance(name, str) or not name.strip():
            report.refused.append(f"{key}: it has no name")
            continue
        name = name.strip()
        if name.casefold() in taken:
            report.refused.append(f"{name} ({key}): a persona of that name already exists")
            continue
        found = descriptions.get(key)
        raw: dict[str, Any] = found if isinstance(found, dict) else {}
        description = str(raw["description"]) if isinstance(raw.get("description"), str) else ""
        title = str(raw["title"]) if isinstance(raw.get("title"), str) else ""
        png, missing = _avatar(folder if folder.is_dir() else None, str(key))
        try:
            persona = _save(root, name, description, title, png, source=str(key))
        except OSError as exc:
            report.refused.append(f"{name} ({key}): cannot be saved ({exc.strerror or exc})")
            continue
        taken.add(name.casefold())
        report.imported.append(persona)
        if missing:
            report.notes.append(f"{name}: imported without an avatar ({missing})")
    return report


def _save(root: Path, name: str, description: str, title: str, png: bytes | None, *, source: str) -> Persona:
    locations.private_dir(root)
    base = slugify(name)
    slug, n = base, 1
    while (root / slug).exists():
        n += 1
        slug = f"{base}-{n}"
    staging = root / f".{slug}.tmp"
    staging.mkdir(mode=locations.PRIVATE_DIR)
    lines = [tomlwrite.assignment("name", name), tomlwrite.assignment("description", description)]
    lines += [tomlwrite.assignment("title", title)] if title else []
    lines.append(tomlwrite.assignment("sillytavern_avatar", source))
    locations.write_private(staging / PERSONA_FILE, "\n".join(lines) + "\n", make_parents=False)
    if png is not None:
        locations.write_private(staging / AVATAR_FILE, png, make_parents=False)
    os.replace(staging, root / slug)
    folder = root / slug
    return Persona(name, description, title, folder / AVATAR_FILE if png is not None else None, folder)
