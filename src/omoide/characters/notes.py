"""The Character's Note and the Author's Note, and text placed at a depth of the chat.

- The Character's Note is a card's `extensions.depth_prompt` ({prompt, depth,
  role}): sent at that depth, every turn, in that role (SillyTavern's
  "Character's Note", Advanced Definitions; depth 4 and role system when unset).
- The Author's Note is a chat's `chat_metadata` (`note_prompt`,
  `note_interval`, `note_position`, `note_depth`, `note_role`), as SillyTavern
  keeps it (public/scripts/authors-note.js). Its position is 0: in the prompt,
  after the scenario; 1: in the chat at its depth (SillyTavern's default); 2:
  before the main prompt. It is sent on every `interval`-th of your messages
  (0: never). Lore at "Top of AN" / "Bottom of AN" goes above and below it.
- At depth N a note goes before the N newest messages (0: after the last);
  notes at the same depth go in SillyTavern's order (doChatInject): by role
  assistant, user, then system nearest the end; of one role, the Author's
  Note, then the Character's Note, then lore, joined by newlines.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from omoide.characters.lore_rules import DEFAULT_DEPTH, MAX_DEPTH, ROLES, NoteRole, clamped_int, role_of
from omoide.characters.model import Character

T = TypeVar("T")

NoteLayer = Literal["authors_note", "character_note", "lore_at_depth"]
LAYER_ORDER: tuple[NoteLayer, ...] = ("authors_note", "character_note", "lore_at_depth")
"""Of one depth and role, the order SillyTavern joins them in (its extension prompts sorted by key)."""


@dataclass(frozen=True, slots=True)
class DepthNote:
    text: str
    depth: int
    role: NoteRole
    layer: NoteLayer


@dataclass(frozen=True, slots=True)
class AuthorsNote:
    prompt: str = ""
    interval: int = 1
    position: int = 1
    """0: after the scenario; 1: in the chat at `depth`; 2: before the main prompt."""
    depth: int = DEFAULT_DEPTH
    role: NoteRole = "system"

    IN_PROMPT = 0
    IN_CHAT = 1
    BEFORE_PROMPT = 2


def character_note(character: Character) -> DepthNote | None:
    """The card's Character's Note, unexpanded, or None."""
    raw = character.extensions.get("depth_prompt") if isinstance(character.extensions, dict) else None
    if not isinstance(raw, dict):
        return None
    prompt = raw.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        return None
    return DepthNote(prompt.strip(), clamped_int(raw.get("depth"), DEFAULT_DEPTH, 0, MAX_DEPTH), role_of(raw.get("role")), "character_note")


def authors_note(metadata: Mapping[str, Any] | None) -> AuthorsNote:
    """The chat's Author's Note from its SillyTavern `chat_metadata`, each field
    with SillyTavern's default where it is missing (an empty note, every turn,
    in the chat at depth 4, as system)."""
    data = metadata if isinstance(metadata, Mapping) else {}
    prompt = data.get("note_prompt")
    return AuthorsNote(
        prompt=prompt if isinstance(prompt, str) else "",
        interval=clamped_int(data.get("note_interval"), 1, 0, 1_000_000),
        position=clamped_int(data.get("note_position"), 1, 0, 2),
        depth=clamped_int(data.get("note_depth"), DEFAULT_DEPTH, 0, MAX_DEPTH),
        role=role_of(data.get("note_role")),
    )


def note_due(interval: int, user_messages: int) -> bool:
    """Whether the Author's Note goes into this prompt: on every `interval`-th
    of your messages (SillyTavern's setFloatingPrompt: 1 always, 0 never)."""
    if interval == 1:
        return True
    if interval <= 0 or user_messages <= 0:
        return False
    return user_messages % interval == 0 if user_messages >= interval else False


def with_lore(note: str, top: Sequence[str], bottom: Sequence[str]) -> str:
    """The Author's Note with lore at its top and bottom (SillyTavern joins them by newlines)."""
    return "\n".join(part for part in (*top, note.strip(), *bottom) if part.strip())


def inject(window: Sequence[T], notes: Sequence[DepthNote], message: Callable[[NoteRole, str], T]) -> list[T]:
    """`window` (oldest first) with each note placed at its depth, as the
    message `message(role, text)` makes; a depth past the oldest message puts
    the note first."""
    if not notes:
        return list(window)
    newest_first = list(reversed(window))
    inserted = 0
    for depth in sorted({n.depth for n in notes}):
        placed: list[T] = []
        for role in ROLES:  # system lands nearest the end
            texts = [n.text.strip() for layer in LAYER_ORDER for n in notes
                     if n.depth == depth and n.role == role and n.layer == layer and n.text.strip()]
            if texts:
                placed.append(message(role, "\n".join(texts)))
        at = min(depth + inserted, len(newest_first))
        newest_first[at:at] = placed
        inserted += len(placed)
    return list(reversed(newest_first))
