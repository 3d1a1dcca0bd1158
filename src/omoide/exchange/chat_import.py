"""`omoide import-chat`: a SillyTavern chat file into the store, a group chat as a scene.

Every speaker is matched to a character first (exchange/speakers.py); cards
given alongside are imported only once every speaker is matched, so a refused
chat leaves nothing behind. A chat with more than one character becomes a
group scene with all of them present from its start, each message under its
speaker, opened with `omoide chat A B ...` and exported back with every name.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

from omoide.characters.cards import character_from_card, import_card, read_card_file
from omoide.characters.model import Character
from omoide.domain.chat import Role
from omoide.errors import OmoideError
from omoide.exchange import sillytavern as st
from omoide.exchange.speakers import match_speakers
from omoide.safe_text import some
from omoide.store import Store

SPEAKERS_NAMED = 10
"""Speakers a refusal names; the rest are counted (a group chat can have thousands)."""


async def import_tavern_chat(store: Store, path: Path, *, characters: Sequence[str], cards: Sequence[Path],
                             find: Callable[[str], Character], library: Callable[[Sequence[str]], Sequence[Character]]) -> str:
    """Import the chat at `path`; returns what to tell the user. `library(names)` gives
    the library's characters with any of those names (or ids)."""
    parsed = st.read_chat(path)
    explicit: dict[str, Character] = {}
    given: list[Character] = []
    for value in characters:
        name, sep, ident = value.rpartition("=")
        if sep and name.strip():
            explicit[name.strip()] = find(ident.strip())
        else:
            given.append(find(value))
    read = [(str(card), character_from_card(read_card_file(card)[0], path=card)) for card in cards]
    speakers = parsed.speakers or ([given[0].name] if given else [])
    if not speakers:
        raise OmoideError(f"{path} does not say which character it is with.", "Name it: --character ID.")
    cast = match_speakers(speakers, explicit=explicit, given=given, cards=read, library=library(speakers))
    if cast.unmatched or cast.ambiguous:
        problems = [f"no character is called {some(cast.unmatched, limit=SPEAKERS_NAMED)}"] if cast.unmatched else []
        problems += [f"several characters are called {some(cast.ambiguous, limit=SPEAKERS_NAMED)}"] if cast.ambiguous else []
        raise OmoideError(
            f"Cannot import {path}: {'; '.join(problems)}. Nothing was imported.",
            "Import their cards with it (--card FILE, repeatable) or name them (--character 'NAME=ID').",
        )
    saved = {path: import_card(Path(path)) for path in cast.cards}
    by_card = {id(c): saved[p] for p, c in read if p in saved}
    who = {speaker: by_card.get(id(c), c) for speaker, c in cast.matched.items()}
    ids = list(dict.fromkeys(who[s].id for s in speakers))
    scene = len(ids) > 1
    nodes = [replace(node, speaker=who[name].id) if scene and node.role is Role.ASSISTANT and name in who else node
             for node, name in zip(parsed.nodes, parsed.names, strict=True)]
    chat = await store.chats.import_tree(ids[0], f"Imported from {path.name}", nodes, parsed.head_index)
    if scene:
        await store.scenes.add(chat.id, ids, opening=True)
    message_ids = await store.exchange.message_ids(chat.id)
    kept = {"chat_metadata": parsed.header.get("chat_metadata"), "create_date": parsed.header.get("create_date"),
            "header": None if parsed.has_header else False}
    await store.exchange.save(chat.id, {k: v for k, v in kept.items() if v is not None},
                              dict(zip(message_ids, parsed.meta, strict=True)))
    cards_note = "".join(f" Imported {c.display_name} ({c.id}) from its card." for c in saved.values())
    if scene:
        names = ", ".join(who[s].display_name for s in speakers)
        return (f"Imported {len(parsed.nodes)} messages into chat #{chat.id}, a scene with {names}.{cards_note} "
                f"Open it with `omoide chat {' '.join(ids)}`.")
    host = who[speakers[0]]
    return (f"Imported {len(parsed.nodes)} messages into chat #{chat.id} with {host.display_name}.{cards_note} "
            f"Open it with `omoide chat {host.id} --chat {chat.id}`.")
