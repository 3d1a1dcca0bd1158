"""Who is who in an imported chat: each speaker's name matched to a character.

A speaker is matched, in this order, to a character named for it
(`--character "Name=id"`), to one of the characters given (`--character id`,
by name or nickname; a chat with one speaker takes the one character given,
whatever its name, as before), to a card imported alongside (`--card FILE`,
by the card's name), or to the library's character of that name.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from omoide.characters.model import Character


@dataclass
class Cast:
    matched: dict[str, Character] = field(default_factory=dict)
    """Speaker name -> character."""
    cards: list[str] = field(default_factory=list)
    """Which of the cards given are needed (their paths), in the order given."""
    unmatched: list[str] = field(default_factory=list)
    ambiguous: list[str] = field(default_factory=list)
    """Speakers whose name several characters of the library share, with their ids."""


def _named(name: str, characters: Sequence[Character]) -> list[Character]:
    wanted = name.strip().casefold()
    return [c for c in characters if wanted in (c.name.strip().casefold(), c.nickname.strip().casefold(), c.id.casefold())]


def match_speakers(speakers: Sequence[str], *, explicit: dict[str, Character], given: Sequence[Character],
                   cards: Sequence[tuple[str, Character]], library: Sequence[Character]) -> Cast:
    """Map every speaker; `cards` are (path, character read from it, not yet imported)."""
    cast = Cast()
    folded = {name.casefold(): who for name, who in explicit.items()}
    for speaker in speakers:
        found = folded.get(speaker.casefold())
        if found is None and len(speakers) == 1 and len(given) == 1:
            found = given[0]
        if found is None:
            found = next(iter(_named(speaker, given)), None)
        if found is None:
            card = next(((path, c) for path, c in cards if _named(speaker, [c])), None)
            if card is not None:
                found = card[1]
                if card[0] not in cast.cards:
                    cast.cards.append(card[0])
        if found is None:
            named = _named(speaker, library)
            if len(named) > 1:
                cast.ambiguous.append(f"{speaker} ({', '.join(c.id for c in named)})")
                continue
            found = named[0] if named else None
        if found is None:
            cast.unmatched.append(speaker)
        else:
            cast.matched[speaker] = found
    return cast
