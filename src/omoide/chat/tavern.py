"""What SillyTavern's rules read from the chat for a session's prompt: the
macro values, the lore's timed effects on the path, the chat's Author's Note.
`Tavern.gather` reads them for one speaker's turn (a `LoreState`); the rules
themselves are applied where the prompt is decided (memory/prompt/build.py,
over the pure modules characters/macros, lore_engine, notes and placement).

Which clock and chat the macros read depends on where the text lands (see
docs/sillytavern.md):

- the card (system prompt, description, persona, examples, constant lore, an
  Author's Note placed in the prompt) reads the chat as it stood at its last
  memory checkpoint (the summary; before the first, the chat's start): it
  changes only when the memory layer after it changes anyway;
- the window's notes and the volatile tail read this turn: the time now, the
  last messages, a fresh {{random}};
- greetings are expanded once, when stored; your own messages are stored as
  typed and expanded in the prompt with values of their own (memory/prompt/sent.py).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

from omoide.characters.lore_engine import Timers, candidates, sources_of
from omoide.characters.lore_state import Activation, span, timers_at
from omoide.characters.macros import MacroEnv, chat_values
from omoide.characters.model import Character, Lorebook
from omoide.characters.notes import authors_note, note_due
from omoide.characters.personas import load_personas
from omoide.config.settings import Settings
from omoide.domain.chat import Chat, MemoryState, Message, Role
from omoide.memory.prompt.model import AssembledPrompt, LoreState
from omoide.store import Store

CHECKPOINT_MESSAGES = 40
"""Messages read back from the last checkpoint for the card's chat macros."""


class Tavern:
    def __init__(self, store: Store, chat_id: int) -> None:
        self.store = store
        self.chat_id = chat_id
        self.rng: random.Random = random.Random()
        """Draws for {{random}}, {{roll}}, lore chances and inclusion groups (a seeded one repeats them)."""
        self.pending: tuple[int, list[str]] | None = None
        """(chat length, entry keys) of the prompt being answered, recorded when its reply starts."""
        self._checkpoint: tuple[int, dict[str, object]] | None = None
        """(the message a summary covers to, the chat's macro values there): read once per summary, not per turn."""

    async def chat_metadata(self) -> dict[str, Any]:
        """SillyTavern's chat_metadata kept from an imported chat ({} for omoide's own)."""
        kept = (await self.store.exchange.chat(self.chat_id)).get("chat_metadata")
        return kept if isinstance(kept, dict) else {}

    def pick_seed(self, metadata: dict[str, Any]) -> str:
        kept = metadata.get("chat_id_hash")
        return f"st:{kept}" if isinstance(kept, int | str) and not isinstance(kept, bool) else f"omoide:{self.chat_id}"

    async def gather(self, *, speaker: Character, books: Sequence[Lorebook], state: MemoryState, head_id: int, user: str,
                     group: Sequence[str], now: datetime) -> LoreState:
        """What the lore scan, the macros and the notes of `speaker`'s prompt at `head_id` read."""
        head = state.window[-1] if state.window and state.window[-1].id == head_id else await self.store.messages.get(head_id)
        chat_length = head.depth + 1
        metadata = await self.chat_metadata()
        base = MacroEnv(char=speaker.display_name, user=user, group=tuple(group), pick_seed=self.pick_seed(metadata))
        live = replace(base, now=now, rng=self.rng, **chat_values(state.window))  # type: ignore[arg-type]
        card = await self._card_env(base, state, head_id)
        rules = {c.key: c.rules for c in candidates(sources_of(speaker.character_book, speaker.id, books)) if c.rules.timed}
        records = await self.store.lore.on_path(head_id, chat_length - span(rules) - 1) if rules else []
        timers = timers_at([Activation(k, n) for k, n in records], rules, chat_length) if rules else Timers(chat_length)
        note = authors_note(metadata)
        due = note_due(note.interval, await self.store.lore.count_on_path(head_id, "user") if note.interval > 1 else 1)
        return LoreState(live, card, timers, note, due, chat_length, self.rng)

    def expect(self, prompt: AssembledPrompt, chat_length: int) -> None:
        """`prompt` is being answered: what fired anew in it is recorded when its reply starts."""
        self.pending = (chat_length, list(prompt.lore_started))

    async def _card_env(self, base: MacroEnv, state: MemoryState, head_id: int) -> MacroEnv:
        """The card's values: the chat at its last checkpoint."""
        summary = state.summary
        if summary is not None and summary.covers_to_id is not None:
            if self._checkpoint is None or self._checkpoint[0] != summary.covers_to_id:  # messages never change
                seen = await self.store.messages.path(summary.covers_to_id, limit=CHECKPOINT_MESSAGES)
                self._checkpoint = (summary.covers_to_id, chat_values(seen))
            values = self._checkpoint[1]
            when, mark = summary.created_at, f"summary:{summary.id}"
        else:
            first = state.window[0] if state.window and state.window[0].parent_id is None else None
            roots = [first] if first else await self.store.messages.path_slice(head_id, 0, 1)
            values = chat_values(roots[:1])
            when, mark = (roots[0].created_at, "start") if roots else (datetime.now().astimezone(), "start")
        return replace(base, now=when, rng=random.Random(f"{base.pick_seed}:{mark}"), **values)  # type: ignore[arg-type]

    async def commit(self, reply: Message) -> None:
        """The reply to the prompt `turn` built has started: record what fired anew at it."""
        if self.pending is None:
            return
        chat_length, keys = self.pending
        self.pending = None
        if keys and reply.role is Role.ASSISTANT:
            await self.store.lore.record(self.chat_id, reply.id, chat_length, keys)


def available_personas(settings: Settings) -> dict[str, str]:
    """Every persona you can be, name -> description: the default (user_name),
    those imported from SillyTavern, and the config file's (which win)."""
    imported = {p.name: p.description for p in load_personas()}
    return {settings.user.name: settings.user.persona, **imported, **settings.user.personas}


def group_names(chat: Chat, present: Sequence[Character]) -> tuple[str, ...]:
    """{{group}}: the characters of a scene; () in a one-on-one chat."""
    return tuple(c.display_name for c in present) if len(chat.cast) > 1 else ()
