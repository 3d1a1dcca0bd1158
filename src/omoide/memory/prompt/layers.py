"""The text of each layer of the prompt, and their assembly into chat
messages (see the package docstring for the order)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, tzinfo
from typing import Literal

from omoide.characters.model import substitute
from omoide.domain.chat import DiaryEntry, MemoryState, Message, MessageStatus, Role
from omoide.llm.base import ChatMessage
from omoide.llm.stamps import stamp
from omoide.memory import recall
from omoide.memory.diary import INLINE_INSTRUCTIONS, NATIVE_INSTRUCTIONS, diary_lines, render_diary, select_diary
from omoide.memory.memos import render_memos
from omoide.memory.prompt.model import DEFAULT_SYSTEM_PROMPT, AssembledPrompt, Layer, PromptContext, SceneFacts, render
from omoide.memory.weights import memo_text, select_weighted


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
