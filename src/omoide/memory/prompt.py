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

from omoide.characters.model import Character, substitute
from omoide.domain.chat import DiaryEntry, MemoryState, Message, MessageStatus, Role
from omoide.llm.base import ChatMessage, Usage
from omoide.memory import recall
from omoide.memory.diary import INLINE_INSTRUCTIONS, NATIVE_INSTRUCTIONS, diary_lines, render_diary, select_diary
from omoide.memory.memos import render_memos
from omoide.memory.weights import memo_text, select_weighted
from omoide.llm.stamps import stamp

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

    def rendered(self) -> str:
        return render(self.messages)


def render(messages: Sequence[ChatMessage]) -> str:
    """A plain, stable rendering used for prefix comparison and the inspector."""
    return "".join(f"<{m['role']}>\n{m.get('content', '')}\n" for m in messages)


def _sub(ctx: PromptContext, text: str) -> str:
    return substitute(text, char=ctx.character.display_name, user=ctx.user_name).strip()


def card_text(ctx: PromptContext) -> str:
    c = ctx.character
    system = c.system_prompt.replace("{{original}}", DEFAULT_SYSTEM_PROMPT) if c.system_prompt.strip() else DEFAULT_SYSTEM_PROMPT
    sections = [system, NATIVE_INSTRUCTIONS if ctx.tools == "native" else INLINE_INSTRUCTIONS]
    if ctx.recall_tool:
        sections.append(recall.NATIVE_INSTRUCTIONS if ctx.tools == "native" else recall.INLINE_INSTRUCTIONS)
    scene = ""
    if ctx.scene is not None:
        present = ", ".join([*ctx.scene.others, "{{user}}"])
        scene = (f"{{{{char}}}} is in a scene with {present}. Write only {{{{char}}}}'s next message; never speak or act "
                 "for anyone else. The others' messages come to you with their names.")
    for title, body in (
        ("Scene", scene),
        ("{{char}}", c.description),
        ("{{char}}'s personality", c.personality),
        ("Scenario", c.scenario),
        ("{{user}}", ctx.user_persona),
        ("World", "\n".join(ctx.constant_lore)),
        ("Example dialogue", c.example_dialogue),
    ):
        if body and body.strip():
            sections.append(f"## {title}\n{body.strip()}")
    return _sub(ctx, "\n\n".join(sections))


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
    parts = []
    if ctx.now is not None:
        parts.append(f"Current date and time: {ctx.now.astimezone(ctx.tz):%A %d %B %Y, %H:%M}.")
    _, new = selected_diary(ctx, state)
    if new:
        parts.append(f"## Diary lines written since\n{render_diary(new)}")
    if ctx.recalled:
        parts.append("## A past moment comes back to you\n" + "\n".join(ctx.recalled))
    if ctx.triggered_lore:
        parts.append("## Relevant lore\n" + "\n".join(ctx.triggered_lore))
    if state.new_memos and "memos" not in ctx.hidden:
        parts.append(f"## Memos written since\n{render_memos(state.new_memos, ctx.tz)}")
    if ctx.world_notes and "world" not in ctx.hidden:
        parts.append("## Mentioned\n" + "\n".join(ctx.world_notes))
    if ctx.character.post_history_instructions.strip():
        parts.append(ctx.character.post_history_instructions)
    return _sub(ctx, "\n\n".join(parts))


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
    window = window_messages(state.window, ctx.tz, ctx.scene, ctx.user_name)[drop_oldest:]
    tail = tail_text(ctx, state)
    stable = "\n\n".join(part for part in (card, profile, world) if part)
    system = "\n\n".join(part for part in (stable, memory, memos) if part)
    speakers = [ctx.user_name, ctx.character.display_name, *(ctx.scene.others if ctx.scene else ())]
    head: ChatMessage = {"role": "system", "content": system, "speakers": speakers}
    if memory or memos:
        head["cache_split"] = len(stable)  # where card, profile and world end: a second cache breakpoint for Anthropic
    messages: list[ChatMessage] = [head, *window]
    if tail:
        messages.append({"role": "system", "content": tail})
    layers = [
        Layer("card", card),
        *([Layer("profile", profile)] if profile else []),
        *([Layer("world", world)] if world else []),
        Layer("memory", memory),
        *([Layer("memos", memos)] if ctx.memo_layer else []),
        Layer("window", render(window), messages=len(window)),
        Layer("tail", tail),
    ]
    stable_shown, new_shown = selected_diary(ctx, state)
    shown = [*([] if drop_diary else stable_shown), *new_shown]
    memories: list[tuple[datetime, str, float | None]] = [(e.created_at, f"diary: {e.content}", ctx.strengths.get(e.id)) for e in shown]
    if memos or (state.new_memos and "memos" not in ctx.hidden):
        shown_memos = [*(state.memos if memos else []), *([] if "memos" in ctx.hidden else state.new_memos)]
        memories += [(m.last_at or m.created_at, f"memo: {memo_text(m)}", ctx.memo_strengths.get(m.id)) for m in shown_memos if not m.gap]
    return AssembledPrompt(messages=messages, layers=layers, memories=memories, recalled=list(ctx.recalled))


HEAD_LAYERS = ("card", "profile", "memory", "memos")
"""The layers joined, in this order, into the leading system message."""


async def count_prompt(prompt: AssembledPrompt, count: CountPrompt) -> AssembledPrompt:
    """Count the whole prompt once, as the backend renders it, and each layer as
    the difference between the prompts that end before and after it, so the
    layers add up to the total and no chat-template framing is counted twice."""
    text = {layer.name: layer.text for layer in prompt.layers}
    head, *rest = prompt.messages
    tail = rest[-1:] if text.get("tail") else []
    window = rest[: len(rest) - len(tail)]
    with_head = await count([head])
    # The leading system message joins these layers in this order: count each
    # growing prefix of them, so each layer's figure is what it adds.
    figures: dict[str, int] = {}
    parts: list[str] = []
    before = 0
    present = [name for name in HEAD_LAYERS if text.get(name)]
    for name in present:
        parts.append(text[name])
        upto = with_head if name == present[-1] else await count([{"role": "system", "content": "\n\n".join(parts)}])
        figures[name], before = upto - before, upto
    with_window = await count([head, *window]) if window else with_head
    total = await count(prompt.messages) if tail else with_window
    figures |= {"window": with_window - with_head, "tail": total - with_window}
    for layer in prompt.layers:
        figures.setdefault(layer.name, 0)
    prompt.layers = [replace(layer, tokens=figures[layer.name]) for layer in prompt.layers]
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
