"""The prompt: a pure function from the memory state at the head to chat messages.

Ordered from the most stable to the most volatile, so that between two memory
checkpoints each turn only appends to the previous prompt and every prompt
cache (llama.cpp, vLLM, OpenAI, Anthropic) reuses the prefix:

    system   card: rules, persona, character, scenario, examples, constant lore
             profile: what is true about the user in every story
             world: the character's world memory (changes when a conversation ends)
             memory: the diary and the summary as of the last checkpoint
             memos: the memo book's newest pages before the window (memo styles)
    window   the messages no summary covers, timestamped, oldest first
    system   volatile tail: date and time, diary lines since the checkpoint,
             lore triggered this turn, memos you wrote since, notes on absent
             characters just mentioned, post-history instructions
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, tzinfo
from typing import Literal

from omoide.characters.macros import MacroEnv, expand  # -- SillyTavern (issue 24) --
from omoide.characters.model import Character, substitute
from omoide.characters.notes import DepthNote
from omoide.characters.placement import Placement
from omoide.domain import DiaryEntry, MemoryState, Message, MessageStatus, Role
from omoide.llm.base import ChatMessage, Usage
from omoide.memory import recall
from omoide.memory.diary import INLINE_INSTRUCTIONS, NATIVE_INSTRUCTIONS, diary_lines, render_diary, select_diary
from omoide.memory.memos import render_memos
from omoide.memory.weights import memo_text, select_weighted
from omoide.memory.window import stamp
from omoide.prompt_notes import layer_tokens, lore_text, macro_env, note_layers, place_notes  # -- SillyTavern (issue 24) --

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
    recall_tool: bool = False
    diary_selection: Literal["recent", "weighted"] = "recent"
    strengths: Mapping[int, float] = field(default_factory=dict)
    """Diary entry id -> strength: what a weighted selection ranks by, and what /prompt shows."""
    memo_strengths: Mapping[int, float] = field(default_factory=dict)
    """Memo id -> strength, for /prompt."""
    hidden: frozenset[str] = frozenset()
    """Memory tiers /amnesia hides: 'diary', 'summary', 'memos', 'world', 'profile'."""
    recalled: Sequence[str] = ()
    """Past moments the user brought back with /recall, for this turn's tail."""
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
    """Lore entries that fired, with why."""
    memories: list[tuple[datetime, str, float | None]] = field(default_factory=list)
    """The diary entries and memos that entered the prompt: (when, 'diary: text' or 'memo: text', strength)."""
    recalled: list[str] = field(default_factory=list)
    """What /recall and the recall tool brought back for this reply."""
    usage: Usage | None = None
    """What the backend reported for the reply to this prompt (cache reads and writes included)."""
    tool_problems: list[str] = field(default_factory=list)
    """Tool calls in the reply to this prompt that failed or were cut, and why."""
    speaker: str = ""
    """Who this prompt is for, and why they were chosen (group scenes)."""
    gossip: str = ""
    """The conversation's gossip target, if one was drawn."""
    notices: list[str] = field(default_factory=list)
    """What the user should hear about this prompt (lore the budget left out), once per session."""
    window_plain: list[ChatMessage] = field(default_factory=list, repr=False)  # the window before notes were placed in it,
    notes: list[DepthNote] = field(default_factory=list, repr=False)  # and the notes: to count each layer

    def rendered(self) -> str:
        return render(self.messages)


def render(messages: Sequence[ChatMessage]) -> str:
    """A plain, stable rendering used for prefix comparison and the inspector."""
    return "".join(f"<{m['role']}>\n{m.get('content', '')}\n" for m in messages)


def _sub(ctx: PromptContext, text: str) -> str:
    return substitute(text, char=ctx.character.display_name, user=ctx.user_name).strip()


def _env(ctx: PromptContext, *, card: bool) -> MacroEnv:
    return macro_env(ctx.macros, ctx.card_macros, char=ctx.character.display_name, user=ctx.user_name, card=card)


def card_text(ctx: PromptContext) -> str:
    c, p, env = ctx.character, ctx.placement, _env(ctx, card=True)
    default = expand(DEFAULT_SYSTEM_PROMPT, env)
    system = expand(c.system_prompt, replace(env, original=default)) if c.system_prompt.strip() else default
    sections = [system, expand(NATIVE_INSTRUCTIONS if ctx.tools == "native" else INLINE_INSTRUCTIONS, env)]
    if ctx.recall_tool:
        sections.append(expand(recall.NATIVE_INSTRUCTIONS if ctx.tools == "native" else recall.INLINE_INSTRUCTIONS, env))
    scene = ""
    if ctx.scene is not None:
        present = ", ".join([*ctx.scene.others, "{{user}}"])
        scene = (f"{{{{char}}}} is in a scene with {present}. Write only {{{{char}}}}'s next message; never speak or act "
                 "for anyone else. The others' messages come to you with their names.")
    examples = [*p.examples_top, c.example_dialogue, *p.examples_bottom]
    for title, body in (
        ("Scene", expand(scene, env)),
        ("World", lore_text(p.lore_before, env)),  # SillyTavern's "Before Char Defs"
        ("{{char}}", expand(c.description, env)),
        ("{{char}}'s personality", expand(c.personality, env)),
        ("Scenario", expand(c.scenario, env)),
        ("World", lore_text([*p.lore_after, *ctx.constant_lore], env)),  # "After Char Defs"
        ("{{user}}", expand(ctx.user_persona, env)),
        ("Example dialogue", lore_text(examples, env)),
    ):
        if body and body.strip():
            sections.append(f"## {expand(title, env)}\n{body.strip()}")
    return "\n\n".join(sections).strip()


def profile_text(ctx: PromptContext) -> str:
    return "" if "profile" in ctx.hidden else _sub(ctx, ctx.profile)


def selected_diary(ctx: PromptContext, state: MemoryState) -> tuple[list[DiaryEntry], list[DiaryEntry]]:
    """The stable and the "written since" entries that enter the prompt, at most
    `diary_lines` diary lines for the two blocks together. Weighted selection
    fills the stable block first (so it changes only at a compression), then the
    newer block with what is left."""
    if "diary" in ctx.hidden:
        return [], []
    if ctx.diary_selection != "weighted":
        return select_diary(state.stable_diary, state.new_diary, ctx.diary_lines)

    def cost(entry: DiaryEntry) -> int:
        return diary_lines([entry])

    stable = select_weighted(state.stable_diary, ctx.strengths, ctx.diary_lines, lines=cost)
    left = max(ctx.diary_lines - sum(cost(e) for e in stable), 0)
    return stable, select_weighted(state.new_diary, ctx.strengths, left, lines=cost)


def memory_text(ctx: PromptContext, state: MemoryState, *, drop_diary: bool = False, summary_chars: int | None = None) -> str:
    parts = []
    stable, _ = selected_diary(ctx, state)
    if stable and not drop_diary:
        parts.append(f"## Diary\n{render_diary(stable)}")
    if state.summary and state.summary.content.strip() and "summary" not in ctx.hidden:
        summary = state.summary.content.strip()
        if summary_chars is not None:
            summary = summary[-summary_chars:]
        parts.append(f"## Recent Conversation Summary\n{summary}")
    return "\n\n".join(parts)


MEMOS_HEADING = "## Memo book\nHighlights of earlier parts of the story, oldest first."


def memos_text(ctx: PromptContext, state: MemoryState) -> str:
    if not state.memos or "memos" in ctx.hidden:
        return ""
    return _sub(ctx, f"{MEMOS_HEADING}\n{render_memos(state.memos, ctx.tz)}")


def window_messages(window: Sequence[Message], tz: tzinfo | None, scene: SceneFacts | None = None,
                    user_name: str = "You") -> list[ChatMessage]:
    """The raw window. In a scene the speaker's own messages are its turns and
    everyone else's arrive as one user turn per run, each line named."""
    out: list[ChatMessage] = []
    for message in window:
        if message.role not in (Role.USER, Role.ASSISTANT):
            continue
        if message.status is MessageStatus.FAILED and not message.content:
            continue
        role: Literal["user", "assistant"] = "user" if message.role is Role.USER else "assistant"
        text = f"{stamp(message.created_at, tz)} {message.content.strip()}"
        if scene is not None:
            who = user_name if role == "user" else scene.names.get(scene.speaker(message), scene.speaker(message))
            role = "assistant" if role == "assistant" and scene.speaker(message) == scene.me else "user"
            if role == "user":
                text = f"{stamp(message.created_at, tz)} {who}: {message.content.strip()}"
                if out and out[-1]["role"] == "user":
                    out[-1]["content"] = f"{out[-1]['content']}\n{text}"
                    continue
        out.append({"role": role, "content": text})
    return out


def tail_text(ctx: PromptContext, state: MemoryState) -> str:
    live = _env(ctx, card=False)

    def names(text: str) -> str:  # what the memory holds: {{char}} and {{user}} only
        return substitute(text, char=ctx.character.display_name, user=ctx.user_name)

    parts = []
    if ctx.now is not None:
        parts.append(f"Current date and time: {ctx.now.astimezone(ctx.tz):%A %d %B %Y, %H:%M}.")
    _, new = selected_diary(ctx, state)
    if new:
        parts.append(names(f"## Diary lines written since\n{render_diary(new)}"))
    if ctx.recalled:
        parts.append(names("## A past moment comes back to you\n" + "\n".join(ctx.recalled)))
    lore = lore_text([*ctx.placement.tail_lore, *ctx.triggered_lore], live)
    if lore:
        parts.append(f"## Relevant lore\n{lore}")
    if state.new_memos and "memos" not in ctx.hidden:
        parts.append(names(f"## Memos written since\n{render_memos(state.new_memos, ctx.tz)}"))
    if ctx.world_notes and "world" not in ctx.hidden:
        parts.append(names("## Mentioned\n" + "\n".join(ctx.world_notes)))
    if ctx.character.post_history_instructions.strip():  # {{original}}: omoide has no default to keep, so nothing
        parts.append(expand(ctx.character.post_history_instructions, replace(live, original="")))
    return "\n\n".join(parts).strip()


def assemble(
    ctx: PromptContext,
    state: MemoryState,
    *,
    drop_oldest: int = 0,
    drop_diary: bool = False,
    summary_chars: int | None = None,
    card_chars: int | None = None,
) -> AssembledPrompt:
    card = card_text(ctx)
    if card_chars is not None:
        card = card[:card_chars]
    profile = profile_text(ctx)
    world = "" if "world" in ctx.hidden else ctx.world.strip()
    memory = memory_text(ctx, state, drop_diary=drop_diary, summary_chars=summary_chars)
    memos = "" if drop_diary else memos_text(ctx, state)
    plain = window_messages(state.window, ctx.tz, ctx.scene, ctx.user_name)[drop_oldest:]
    window, notes = place_notes(plain, ctx.placement.at_depth, _env(ctx, card=False))
    tail = tail_text(ctx, state)
    note_before, note_after = (expand(n, _env(ctx, card=True)).strip() for n in (ctx.placement.note_before_card, ctx.placement.note_after_card))
    stable = "\n\n".join(part for part in (note_before, card, note_after, profile, world) if part)
    system = "\n\n".join(part for part in (stable, memory, memos) if part)
    speakers = [ctx.user_name, ctx.character.display_name, *(ctx.scene.others if ctx.scene else ())]
    head: ChatMessage = {"role": "system", "content": system, "speakers": speakers}
    if memory or memos:
        head["cache_split"] = len(stable)  # where card, profile and world end: a second cache breakpoint for Anthropic
    messages: list[ChatMessage] = [head, *window]
    if tail:
        messages.append({"role": "system", "content": tail})
    layers = [
        *([Layer("authors_note", note_before)] if note_before else []),
        Layer("card", card),
        *([Layer("authors_note", note_after)] if note_after else []),
        *([Layer("profile", profile)] if profile else []),
        *([Layer("world", world)] if world else []),
        Layer("memory", memory),
        *([Layer("memos", memos)] if ctx.memo_layer else []),
        Layer("window", render(plain), messages=len(plain)),
        *(Layer(name, text, messages=placed) for name, text, placed in note_layers(notes)),
        Layer("tail", tail),
    ]
    stable_shown, new_shown = selected_diary(ctx, state)
    shown = [*([] if drop_diary else stable_shown), *new_shown]
    memories: list[tuple[datetime, str, float | None]] = [(e.created_at, f"diary: {e.content}", ctx.strengths.get(e.id)) for e in shown]
    if memos or (state.new_memos and "memos" not in ctx.hidden):
        shown_memos = [*(state.memos if memos else []), *([] if "memos" in ctx.hidden else state.new_memos)]
        memories += [(m.last_at or m.created_at, f"memo: {memo_text(m)}", ctx.memo_strengths.get(m.id)) for m in shown_memos if not m.gap]
    return AssembledPrompt(messages=messages, layers=layers, memories=memories, recalled=list(ctx.recalled),
                           window_plain=plain, notes=notes)


async def count_prompt(prompt: AssembledPrompt, count: CountPrompt) -> AssembledPrompt:
    """Count the whole prompt once, as the backend renders it, and each layer as
    the difference between the prompts that end before and after it, so the
    layers add up to the total and no chat-template framing is counted twice."""
    figures, total = await layer_tokens([(layer.name, layer.text) for layer in prompt.layers], prompt.messages,
                                        prompt.window_plain, prompt.notes, count)
    prompt.layers = [replace(layer, tokens=tokens) for layer, tokens in zip(prompt.layers, figures, strict=True)]
    prompt.total_tokens = total
    return prompt


async def fit(
    ctx: PromptContext, state: MemoryState, count: CountPrompt, budget: int, *, full: AssembledPrompt | None = None
) -> AssembledPrompt:
    """The fullest prompt that fits `budget` tokens. Drops, in order: the oldest
    window messages (never the last one), the stable diary, then the older part
    of the summary. What was dropped is listed for the inspector. `full` is
    `assemble(ctx, state)` when the caller has already built it."""
    prompt = full or assemble(ctx, state)
    window_size = next(layer.messages for layer in prompt.layers if layer.name == "window")
    if await count(prompt.messages) <= budget:
        prompt.budget = budget
        return await count_prompt(prompt, count)
    # Drop whole window messages, fewest first, by bisection on how many to drop.
    low, high = 1, max(window_size - 1, 0)
    best: AssembledPrompt | None = None
    while low <= high:
        mid = (low + high) // 2
        candidate = assemble(ctx, state, drop_oldest=mid)
        if await count(candidate.messages) <= budget:
            best, high = candidate, mid - 1
            best.dropped = [f"the {mid} oldest message(s) of the raw window"]
        else:
            low = mid + 1
    if best is None:
        dropped = [f"the {max(window_size - 1, 0)} oldest message(s) of the raw window"] if window_size > 1 else []
        drop = max(window_size - 1, 0)
        best = assemble(ctx, state, drop_oldest=drop, drop_diary=True)
        dropped.append("the diary block" + (" and the memo layer" if state.memos else ""))
        summary = state.summary.content if state.summary else ""
        chars = len(summary)
        while await count(best.messages) > budget and chars > 0:
            chars = chars // 2
            best = assemble(ctx, state, drop_oldest=drop, drop_diary=True, summary_chars=chars)
        if summary and chars < len(summary):
            dropped.append(f"the oldest {len(summary) - chars} characters of the summary")
        card = len(card_text(ctx))
        card_chars = card
        while await count(best.messages) > budget and card_chars > 0:
            card_chars = card_chars * 3 // 4
            best = assemble(
                ctx, state, drop_oldest=drop, drop_diary=True, summary_chars=0 if summary else None, card_chars=card_chars
            )
        if card_chars < card:
            dropped.append(f"the last {card - card_chars} characters of the character card (raise context_size)")
        best.dropped = dropped
    best.budget = budget
    return await count_prompt(best, count)


def shared_prefix_chars(previous: str, current: str) -> int:
    limit = min(len(previous), len(current))
    i = 0
    step = 4096
    while i + step <= limit and previous[i : i + step] == current[i : i + step]:
        i += step
    while i < limit and previous[i] == current[i]:
        i += 1
    return i
