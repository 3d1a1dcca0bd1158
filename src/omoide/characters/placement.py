"""Where each fired lore entry, the Character's Note and the Author's Note go in
the prompt, so that its stable prefix stays stable.

SillyTavern's positions (Usage/worldinfo.md, Insertion Position) are kept
wherever the text is the same from one turn to the next. An entry that may
change every turn (keyed, by chance, in an inclusion group, sticky or
cooling down) is never put in the card: there it would change the prompt's
first bytes whenever it fires or stops, and every cached token after them
would be evaluated again. So:

- "Before Char Defs", "After Char Defs", "Before/After Example Messages":
  a constant entry goes to that place in the card; any other goes to the
  volatile tail (with what fired this turn), in the same order;
- "@ D": at its depth in the chat, with its role (whatever kind it is: what
  is there changes the prompt only near its end);
- "Top of AN" / "Bottom of AN": with the Author's Note, above or below it;
  when the note sits in the card (positions "after scenario" and "before the
  main prompt"), only constant entries join it and the others go to the tail;
  when the note is not due this turn they are left out, as in SillyTavern;
- "Outlet": only `{{outlet::name}}` would place it, and omoide does not expand
  outlets: left out.

Texts stay as written; the prompt expands their macros where they land (the
card's with the clock of its last checkpoint, the rest with this turn's).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from omoide.characters.lore_match import FiredEntry
from omoide.characters.lore_rules import Position
from omoide.characters.notes import AuthorsNote, DepthNote, with_lore


@dataclass(frozen=True, slots=True)
class Placement:
    lore_before: tuple[str, ...] = ()
    """Constant lore before the character's description."""
    lore_after: tuple[str, ...] = ()
    """Constant lore after the scenario."""
    examples_top: tuple[str, ...] = ()
    examples_bottom: tuple[str, ...] = ()
    note_before_card: str = ""
    """The Author's Note placed before the main prompt."""
    note_after_card: str = ""
    """The Author's Note placed in the prompt (SillyTavern: after the scenario; here: right after the card)."""
    tail_lore: tuple[str, ...] = ()
    """Lore whose place is in the card but which may change every turn: sent in the volatile tail."""
    at_depth: tuple[DepthNote, ...] = ()
    """The Character's Note, the Author's Note in the chat, and lore at a depth."""
    left_out: tuple[str, ...] = ()
    """Lore that fired but has no place this turn, with why (for /prompt)."""

    @property
    def authors_note(self) -> str:
        return self.note_before_card or self.note_after_card or next(
            (n.text for n in self.at_depth if n.layer == "authors_note"), "")


def _stable(fired: FiredEntry) -> bool:
    """Whether the entry is in the prompt, the same, at every turn from here on."""
    r = fired.rules
    return fired.entry.constant and r.probability >= 100 and not r.groups and not r.timed


def place(fired: Sequence[FiredEntry], *, character_note: DepthNote | None, note: AuthorsNote, note_due: bool) -> Placement:
    """Place the fired entries (in insertion order) and the notes."""
    slots: dict[Position, list[str]] = {p: [] for p in Position}
    tail: list[str] = []
    depth: list[DepthNote] = []
    left_out: list[str] = []
    note_in_card = note.position != AuthorsNote.IN_CHAT
    for hit in fired:
        content, position = hit.entry.content, hit.rules.position
        if not content.strip():
            continue
        name = hit.entry.name or (hit.entry.keys[0] if hit.entry.keys else "entry")
        if position is Position.AT_DEPTH:
            depth.append(DepthNote(content, hit.rules.depth, hit.rules.role, "lore_at_depth"))
        elif position is Position.OUTLET:
            left_out.append(f"{name}: an outlet entry (only {{{{outlet::…}}}} places it)")
        elif position in (Position.AN_TOP, Position.AN_BOTTOM):
            if not note_due or note.interval <= 0:
                left_out.append(f"{name}: at the Author's Note, which is not sent this turn")
            elif note_in_card and not _stable(hit):
                tail.append(content)
            else:
                slots[position].append(content)
        elif _stable(hit):
            slots[position].append(content)
        else:
            tail.append(content)
    note_text = with_lore(note.prompt, slots[Position.AN_TOP], slots[Position.AN_BOTTOM]) if note_due and note.interval > 0 else ""
    before_card = note_text if note_text and note.position == AuthorsNote.BEFORE_PROMPT else ""
    after_card = note_text if note_text and note.position == AuthorsNote.IN_PROMPT else ""
    if note_text and note.position == AuthorsNote.IN_CHAT:
        depth.insert(0, DepthNote(note_text, note.depth, note.role, "authors_note"))
    if character_note is not None:
        depth.append(character_note)
    return Placement(
        lore_before=tuple(slots[Position.BEFORE]), lore_after=tuple(slots[Position.AFTER]),
        examples_top=tuple(slots[Position.EXAMPLES_TOP]), examples_bottom=tuple(slots[Position.EXAMPLES_BOTTOM]),
        note_before_card=before_card, note_after_card=after_card, tail_lore=tuple(tail), at_depth=tuple(depth),
        left_out=tuple(left_out),
    )
