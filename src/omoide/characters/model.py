"""The Character: what a card or a character folder says, in one shape."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(slots=True)
class LoreEntry:
    keys: list[str]
    content: str
    secondary_keys: list[str] = field(default_factory=list)
    selective: bool = False
    """Fire only when a primary key and a secondary key both match."""
    case_sensitive: bool = False
    use_regex: bool = False
    constant: bool = False
    """Always inserted, whatever the messages say."""
    enabled: bool = True
    insertion_order: int = 100
    priority: int = 10
    """When the budget is short, lower priority entries are dropped first."""
    name: str = ""
    id: int | None = None
    extensions: dict[str, Any] = field(default_factory=dict)
    position: str = ""
    """A card's `position` (Character Card V2): 'before_char' or 'after_char'; SillyTavern's finer
    placement is in extensions (see lore_rules.py)."""


@dataclass(slots=True)
class Lorebook:
    entries: list[LoreEntry] = field(default_factory=list)
    name: str = ""
    scan_depth: int = 4
    """How many recent messages are scanned for keys."""
    token_budget: int | None = None
    """Tokens the fired entries may take; None follows the context size
    (`lore_budget_percent` of it, as SillyTavern's world info budget does)."""
    recursive_scanning: bool = False
    """Lore that fired can fire other entries (on for SillyTavern world files, as SillyTavern ships)."""
    extensions: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class Character:
    id: str
    """Stable identifier: the folder name or the slug of an imported card."""
    name: str
    description: str = ""
    personality: str = ""
    scenario: str = ""
    first_message: str = ""
    alternate_greetings: list[str] = field(default_factory=list)
    example_dialogue: str = ""
    system_prompt: str = ""
    """Replaces the default system prompt when not empty ({{original}} keeps it)."""
    post_history_instructions: str = ""
    creator_notes: str = ""
    """For people, never for the prompt."""
    nickname: str = ""
    """Replaces {{char}} when set (Character Card V3)."""
    tags: list[str] = field(default_factory=list)
    creator: str = ""
    character_version: str = ""
    character_book: Lorebook | None = None
    extensions: dict[str, Any] = field(default_factory=dict)
    source: Path | None = None
    """Where it was read from."""
    bundled: bool = False
    """Shipped with omoide rather than made or imported by the user."""
    raw_card: dict[str, Any] | None = None
    """The card exactly as imported, so an export gives back every field."""

    @property
    def display_name(self) -> str:
        return self.nickname or self.name


def substitute(text: str, *, char: str, user: str) -> str:
    """Replace the {{char}} and {{user}} macros (any letter case, as cards use both)."""
    import re

    # A function replacement: a name is text, never a template (a backslash in it stays as typed).
    text = re.sub(r"\{\{\s*char\s*\}\}|<BOT>", lambda _: char, text, flags=re.IGNORECASE)
    return re.sub(r"\{\{\s*user\s*\}\}|<USER>", lambda _: user, text, flags=re.IGNORECASE)
