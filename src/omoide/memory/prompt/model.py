"""The prompt's shapes: what a session gathers (`PromptInputs`), the context
the layers are written from (`PromptContext`), and the assembled prompt with
its layer map (`AssembledPrompt`, which /prompt and the cache figures read)."""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, tzinfo
from typing import Literal

from omoide.memory.corrections import Correction
from omoide.characters.lore_engine import Timers
from omoide.characters.lore_match import SkippedEntry
from omoide.characters.macros import MacroEnv
from omoide.characters.model import Character, Lorebook
from omoide.characters.notes import AuthorsNote, DepthNote
from omoide.characters.placement import Placement
from omoide.domain.chat import MemoryState, Message
from omoide.llm.base import ChatMessage, Usage
from omoide.memory.passage import Passage

DEFAULT_SYSTEM_PROMPT = (
    "You are {{char}} in an ongoing roleplay with {{user}}. Stay in character. "
    "Write {{char}}'s next reply only: a few short paragraphs, actions in *asterisks*. "
    "Never speak or act for {{user}}. Each message starts with the time it was sent; "
    "use it to sense how much time has passed, but never write timestamps yourself."
)
CountPrompt = Callable[[list[ChatMessage]], Awaitable[int]]
"""Tokens of a list of messages counted as one prompt (chat template included)."""


@dataclass(frozen=True, slots=True)
class SceneFacts:
    """A group scene, as one speaker's prompt sees it."""

    me: str
    """The speaker's id."""
    host: str
    """The chat's character: the speaker of replies stored without one."""
    names: Mapping[str, str]
    """Character id -> display name, for everyone ever in the scene."""
    others: Sequence[str] = ()
    """The display names of the other characters present."""

    def speaker(self, message: Message) -> str:
        return message.speaker or self.host


@dataclass(frozen=True, slots=True)
class PromptContext:
    character: Character
    user_name: str = "You"
    user_persona: str = ""
    tools: Literal["native", "inline"] = "inline"
    diary_lines: int = 50
    now: datetime | None = None
    tz: tzinfo | None = None
    constant_lore: Sequence[str] = ()
    triggered_lore: Sequence[str] = ()
    memo_layer: bool = False
    """memory_style 'memos' or 'both': the prompt has a memo layer (shown even when empty)."""
    profile: str = ""
    """The user profile's section (profile.prompt_section), '' for none."""
    pinned: Sequence[str] = ()
    """Facts pinned to the speaker (/pin): in every prompt of it, never fitted or summarised away."""
    corrections: Sequence[Correction] = ()
    """Your corrections on the path (memory/corrections.py): the old values they name show as past."""
    recall_tool: bool = False
    diary_selection: Literal["recent", "weighted"] = "recent"
    strengths: Mapping[int, float] = field(default_factory=dict)
    """Diary entry id -> strength: what a weighted selection ranks by, and what /prompt shows."""
    memo_strengths: Mapping[int, float] = field(default_factory=dict)
    """Memo id -> strength, for /prompt."""
    hidden: frozenset[str] = frozenset()
    """Memory tiers /amnesia hides: 'diary', 'summary', 'memos', 'world', 'profile', 'pinned', 'corrections',
    'passages'."""
    recalled: Sequence[str] = ()
    """Past moments the user brought back with /recall, for this turn's tail."""
    passages: Sequence[Passage] = ()
    """Memories that come to mind this turn (memory/passages.py), after the window."""
    world: str = ""
    """World memory (omoide.world.prompt.world_block): stable between conversation ends."""
    world_notes: Sequence[str] = ()
    """Hidden notes on absent characters mentioned in the recent messages."""
    scene: SceneFacts | None = None
    """Set in a group scene: the others' messages are attributed by name."""
    placement: Placement = field(default_factory=Placement)
    """Where lore and the Character's and Author's Notes go (characters/placement.py)."""
    macros: MacroEnv | None = None
    """This turn's macro values (the window's notes, the tail); None: only {{char}} and {{user}}."""
    card_macros: MacroEnv | None = None
    """The card's macro values, as of the last memory checkpoint; None: `macros`."""


@dataclass(frozen=True, slots=True)
class Layer:
    name: str
    text: str
    tokens: int = 0
    messages: int = 1


@dataclass(frozen=True, slots=True)
class CardCut:
    """A field of the card the fit to the context left out: whole, or its end."""

    field: str
    tokens: int
    whole: bool

    def phrase(self) -> str:
        return f"the card's {self.field}, {self.tokens:,} tokens" if self.whole else \
            f"the end of the card's {self.field}, {self.tokens:,} tokens"


@dataclass(slots=True)
class AssembledPrompt:
    messages: list[ChatMessage]
    layers: list[Layer]
    total_tokens: int = 0
    budget: int | None = None
    exact: bool = False
    count_method: str = "estimate"
    dropped: list[str] = field(default_factory=list)
    shared_tokens: int | None = None
    """Tokens at the start of this prompt identical to the previous turn's prompt."""
    lore: list[str] = field(default_factory=list)
    """Lore entries that fired, with why, and those skipped, with why."""
    skipped_lore: list[SkippedEntry] = field(default_factory=list)
    """The entries skipped: a broken key, a chance, or the lore budget."""
    memories: list[tuple[datetime, str, float | None]] = field(default_factory=list)
    """The diary entries and memos that entered the prompt: (when, 'diary: text' or 'memo: text', strength)."""
    recalled: list[str] = field(default_factory=list)
    """What /recall and the recall tool brought back for this reply."""
    passages: list[str] = field(default_factory=list)
    """The memories that came to mind, each with why (its matched words and score parts)."""
    usage: Usage | None = None
    """What the backend reported for the reply to this prompt (cache reads and writes included)."""
    tool_problems: list[str] = field(default_factory=list)
    """Tool calls in the reply to this prompt that failed or were cut, and why."""
    speaker: str = ""
    """Who this prompt is for, and why they were chosen (group scenes)."""
    gossip: str = ""
    """The conversation's gossip target, if one was drawn."""
    notices: list[str] = field(default_factory=list)
    """What the user should hear about this prompt (lore the budget left out)."""
    card_cut: list[CardCut] = field(default_factory=list)
    """The card's fields the context could not hold (the fit's last resort)."""
    window_cut: int = 0
    """With the card cut: the oldest messages of the window left out (all but the newest)."""
    greeting_cut: bool = False
    """The greeting is among them."""
    lore_started: list[str] = field(default_factory=list)
    """Lore entries with a sticky or cooldown that fired anew: recorded at the reply."""
    window_plain: list[ChatMessage] = field(default_factory=list, repr=False)
    """The window before notes were placed in it, and the notes: to count each layer."""
    notes: list[DepthNote] = field(default_factory=list, repr=False)

    def rendered(self) -> str:
        return render(self.messages)


def render(messages: Sequence[ChatMessage]) -> str:
    """A plain, stable rendering used for prefix comparison and the inspector."""
    return "".join(f"<{m['role']}>\n{m.get('content', '')}\n" for m in messages)



@dataclass(frozen=True, slots=True)
class PromptOptions:
    """The settings a prompt is decided by."""

    diary_lines: int = 50
    diary_selection: Literal["recent", "weighted"] = "recent"
    memo_layer: bool = False
    """memory_style 'memos' or 'both': the prompt has a memo layer (shown even when empty)."""
    recall_tool: bool = False
    context_size: int = 8192
    max_tokens: int = 400
    """Room kept for the reply: the prompt fits context_size - max_tokens."""
    lore_budget_percent: int = 25
    """Share of the context that lore may take, for lorebooks that set no budget of their own."""


@dataclass(frozen=True, slots=True)
class PromptInputs:
    """Everything one speaker's prompt at one head is decided from, as the chat
    session gathered it: no layer is decided here yet (amnesia, lore and its
    budget, gossip and the fit are `build_prompt`'s)."""

    character: Character
    """The speaker."""
    state: MemoryState
    """The memory on the path at the head (in a scene, with the speaker's own diary)."""
    options: PromptOptions = PromptOptions()
    user_name: str = "You"
    user_persona: str = ""
    tools: Literal["native", "inline"] = "inline"
    now: datetime | None = None
    tz: tzinfo | None = None
    lorebooks: Sequence[Lorebook] = ()
    """Every lorebook the speaker reads: its card's and the world files attached to it."""
    lore: LoreState | None = None
    """What SillyTavern's lore rules and notes read beyond the books (gathered from the store)."""
    profile: str = ""
    """The user profile's prompt section."""
    pinned: Sequence[str] = ()
    """The facts pinned to the speaker (/pin), oldest first."""
    corrections: Sequence[Correction] = ()
    """Your corrections on the path, oldest first."""
    world: str = ""
    """The speaker's world memory block."""
    world_notes: Sequence[str] = ()
    """Notes on absent characters mentioned in the recent messages."""
    gossip: str = ""
    """What the speaker remembers of the conversation's gossip target, and its nudge."""
    gossip_target: str = ""
    strengths: Mapping[int, float] = field(default_factory=dict)
    memo_strengths: Mapping[int, float] = field(default_factory=dict)
    hidden: frozenset[str] = frozenset()
    """The tiers /amnesia hides in this chat."""
    recalled: Sequence[str] = ()
    passages: Sequence[Passage] = ()
    """Memories that come to mind this turn (the layer decides whether /amnesia hides them)."""
    scene: SceneFacts | None = None
    previous: str | None = None
    """The previous prompt as rendered, for the prefix the two share."""
    kept_before: int | None = None
    """The window messages the previous prompt kept: where the fit to the context
    starts looking (a long window is cut at about the same place every turn)."""


@dataclass(frozen=True, slots=True)
class LoreState:
    """What the lore scan, the macros and the notes of one turn read from the
    chat, as the session gathered it: the macro values now and as of the last
    memory checkpoint, the timed effects on the path, the chat's Author's Note
    and whether it is due."""

    macros: MacroEnv
    card_macros: MacroEnv
    timers: Timers
    authors_note: AuthorsNote
    note_due: bool
    chat_length: int
    """Messages on the path to the head: where timed effects count from."""
    rng: random.Random
    """Draws for lore chances and inclusion groups (and this turn's {{random}})."""
