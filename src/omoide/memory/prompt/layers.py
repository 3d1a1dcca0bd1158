"""The text of each layer of the prompt, and their assembly into chat
messages (see the package docstring for the order)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime, timedelta, tzinfo
from typing import Literal

from omoide.characters.macros import MacroEnv, expand
from omoide.characters.model import substitute
from omoide.domain.chat import DiaryEntry, MemoryState, Message, MessageStatus, Recap, Role
from omoide.llm.base import ChatMessage
from omoide.llm.stamps import stamp
from omoide.memory import corrections, recall
from omoide.memory.diary import INLINE_INSTRUCTIONS, NATIVE_INSTRUCTIONS, diary_lines, render_diary, select_diary
from omoide.memory.memos import render_memos
from omoide.memory.passages import passages_text
from omoide.memory.prompt.model import DEFAULT_SYSTEM_PROMPT, AssembledPrompt, Layer, PromptContext, SceneFacts, render
from omoide.memory.prompt.notes import lore_text, macro_env, note_layers, place_notes
from omoide.memory.weights import memo_text, select_weighted


def _sub(ctx: PromptContext, text: str) -> str:
    return substitute(text, char=ctx.character.display_name, user=ctx.user_name).strip()


def _env(ctx: PromptContext, *, card: bool) -> MacroEnv:
    return macro_env(ctx.macros, ctx.card_macros, char=ctx.character.display_name, user=ctx.user_name, card=card)


def card_sections(ctx: PromptContext) -> list[tuple[str, str]]:
    """The card's parts in prompt order, (what it is, its text): joined by blank lines, they are the card layer."""
    c, p, env = ctx.character, ctx.placement, _env(ctx, card=True)
    default = expand(DEFAULT_SYSTEM_PROMPT, env)
    system = expand(c.system_prompt, replace(env, original=default)) if c.system_prompt.strip() else default
    sections = [("system prompt", system),
                ("instructions", expand(NATIVE_INSTRUCTIONS if ctx.tools == "native" else INLINE_INSTRUCTIONS, env))]
    if ctx.recall_tool:
        sections.append(("instructions", expand(recall.NATIVE_INSTRUCTIONS if ctx.tools == "native" else recall.INLINE_INSTRUCTIONS, env)))
    scene = ""
    if ctx.scene is not None:
        present = ", ".join([*ctx.scene.others, "{{user}}"])
        scene = (f"{{{{char}}}} is in a scene with {present}. Write only {{{{char}}}}'s next message; never speak or act "
                 "for anyone else. The others' messages come to you with their names.")
    examples = [*p.examples_top, c.example_dialogue, *p.examples_bottom]
    for field, title, body in (
        ("scene", "Scene", expand(scene, env)),
        ("lore", "World", lore_text(p.lore_before, env)),  # SillyTavern's "Before Char Defs"
        ("description", "{{char}}", expand(c.description, env)),
        ("personality", "{{char}}'s personality", expand(c.personality, env)),
        ("scenario", "Scenario", expand(c.scenario, env)),
        ("lore", "World", lore_text([*p.lore_after, *ctx.constant_lore], env)),  # "After Char Defs"
        ("persona", "{{user}}", expand(ctx.user_persona, env)),
        ("example dialogue", "Example dialogue", example_dialogue(lore_text(examples, env))),
    ):
        if body and body.strip():
            sections.append((field, f"## {expand(title, env)}\n{body.strip()}"))
    return [(field, text) for field, text in sections if text]


_START = re.compile(r"<START>", re.IGNORECASE)
EXAMPLE_SEPARATOR = "[Example Chat]"
"""What a card's `<START>` becomes: SillyTavern's heading of a new example chat."""


def example_dialogue(text: str) -> str:
    """The example dialogue with each `<START>` made the example separator,
    as SillyTavern does: a card's examples are separate little chats, and
    `<START>` is a marker for the front end, not text for the model. Text without
    a `<START>` is one example and is left as it is."""
    if not _START.search(text):
        return text
    blocks = [block.strip() for block in _START.split(text)]
    return "\n\n".join(f"{EXAMPLE_SEPARATOR}\n{block}" for block in blocks if block)


def card_text(ctx: PromptContext) -> str:
    return "\n\n".join(text for _, text in card_sections(ctx)).strip()


def cut_card(card: str, chars: int) -> str:
    """The first `chars` characters of the card, ending at a word's end rather than inside one."""
    if chars >= len(card):
        return card
    kept = card[:chars]
    space = max(kept.rfind(" "), kept.rfind("\n"))
    return (kept[:space] if space > chars // 2 else kept).rstrip()


def profile_text(ctx: PromptContext) -> str:
    return "" if "profile" in ctx.hidden else _sub(ctx, ctx.profile)


PINNED_HEADING = "## Pinned: always true in this story"


def pinned_text(ctx: PromptContext) -> str:
    """The facts pinned to the speaker, one a line ('' for none, or hidden by /amnesia pinned)."""
    if not ctx.pinned or "pinned" in ctx.hidden:
        return ""
    return _sub(ctx, PINNED_HEADING + "\n" + "\n".join(f"- {fact}" for fact in ctx.pinned))


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
    if ctx.corrections:
        parts.append(corrections.block(ctx.corrections, ctx.user_name, ctx.tz))
    return corrections.mark_past("\n\n".join(parts), ctx.corrections, ctx.tz)


MEMOS_HEADING = "## Memo book\nHighlights of earlier parts of the story, oldest first."


def memos_text(ctx: PromptContext, state: MemoryState) -> str:
    if not state.memos or "memos" in ctx.hidden:
        return ""
    return _sub(ctx, corrections.mark_past(f"{MEMOS_HEADING}\n{render_memos(state.memos, ctx.tz)}", ctx.corrections, ctx.tz))


RECAP_LABEL = "Summary, continued:"
"""Opens a part of the summary placed in the window (MemoryState.timeline)."""
SUMMARY_LABEL = "Summary of the story so far:"
"""Opens the summary a rewrite made, placed in the window."""


def recap_message(recap: Recap) -> ChatMessage:
    label = SUMMARY_LABEL if recap.whole else RECAP_LABEL
    return {"role": "system", "content": f"{label} {recap.text}", "recap": True}


def window_messages(window: Sequence[Message], tz: tzinfo | None, scene: SceneFacts | None = None,
                    user_name: str = "You", recaps: Sequence[Recap] = ()) -> list[ChatMessage]:
    """The raw window. In a scene the speaker's own messages are its turns and
    everyone else's arrive as one user turn per run, each line named. `recaps`
    (parts of the summary) go right after the message each was written at, or
    first when that message is no longer in the window."""
    on = {m.id for m in window}
    after: dict[int, list[Recap]] = {}
    out: list[ChatMessage] = []
    for recap in recaps:
        if recap.anchor_id in on:
            after.setdefault(recap.anchor_id, []).append(recap)
        else:
            out.append(recap_message(recap))
    before: Message | None = None
    for message in window:
        _add_line(out, message, tz, scene, user_name, own_stamp=not _answers(message, before))
        out += [recap_message(recap) for recap in after.get(message.id, ())]
        before = message
    return out


REPLY_MOMENT = timedelta(minutes=15)
"""A reply written this soon after the line before it is at that line's time."""


def _answers(message: Message, before: Message | None) -> bool:
    """Whether `message` is the character's reply to the line just before it (or
    the window's first line): it then carries no stamp of its own. A server
    caches the reply as the model wrote it, with no stamp; a stamp put before it
    in a later prompt would make the server evaluate the reply and everything
    after it again. So a line only ever loses its stamp, when it becomes the first."""
    return message.role is Role.ASSISTANT and (
        before is None or timedelta(0) <= message.created_at - before.created_at <= REPLY_MOMENT)


def kept_recaps(dropped: Sequence[ChatMessage], summary_chars: int | None) -> list[ChatMessage]:
    """The parts of the summary among the oldest lines the fit drops: kept (the
    summary is cut last, as when it stands before the window), at most their
    last `summary_chars` characters when the fit cuts the summary too."""
    recaps = [m for m in dropped if m.get("recap")]
    if summary_chars is None:
        return recaps
    out: list[ChatMessage] = []
    left = summary_chars
    for message in reversed(recaps):
        if left <= 0:
            break
        text = message["content"][-left:]
        left -= len(text)
        out.append({"role": "system", "content": text.lstrip(), "recap": True})
    return out[::-1]


def _add_line(out: list[ChatMessage], message: Message, tz: tzinfo | None, scene: SceneFacts | None, user_name: str,
              *, own_stamp: bool = True) -> None:
    if message.role not in (Role.USER, Role.ASSISTANT):
        return
    if message.status is MessageStatus.FAILED and not message.content:
        return
    role: Literal["user", "assistant"] = "user" if message.role is Role.USER else "assistant"
    text = f"{stamp(message.created_at, tz)} {message.content.strip()}" if own_stamp else message.content.strip()
    if scene is not None:
        who = user_name if role == "user" else scene.names.get(scene.speaker(message), scene.speaker(message))
        role = "assistant" if role == "assistant" and scene.speaker(message) == scene.me else "user"
        if role == "user":
            text = f"{stamp(message.created_at, tz)} {who}: {message.content.strip()}"
            if out and out[-1]["role"] == "user":
                out[-1]["content"] = f"{out[-1]['content']}\n{text}"
                return
    out.append({"role": role, "content": text})


def passages_layer(ctx: PromptContext) -> str:
    """The passages layer: first in the closing system message, after the window
    (it changes every turn, so it never sits before the cached prefix)."""
    return "" if "passages" in ctx.hidden else corrections.mark_past(passages_text(ctx.passages, ctx.tz), ctx.corrections, ctx.tz)


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
    rendered_window: Sequence[ChatMessage] | None = None,
) -> AssembledPrompt:
    """The prompt of `state`, less what the fit drops. `rendered_window` is the
    whole window as an assemble of the same `ctx` and `state` rendered it (the
    fit assembles a prompt again and again, a long window each time)."""
    timeline = state.timeline if "summary" not in ctx.hidden else None
    if timeline is not None and state.summary is not None:  # the base before the window, the parts in it
        state = replace(state, summary=replace(state.summary, content=timeline.base))
    card = card_text(ctx)
    if card_chars is not None:
        card = cut_card(card, card_chars)
    profile = profile_text(ctx)
    world = "" if "world" in ctx.hidden else corrections.mark_past(ctx.world.strip(), ctx.corrections, ctx.tz)
    pinned = pinned_text(ctx)
    memory = memory_text(ctx, state, drop_diary=drop_diary, summary_chars=summary_chars)
    memos = "" if drop_diary else memos_text(ctx, state)
    if rendered_window is None:
        rendered_window = window_messages(state.window, ctx.tz, ctx.scene, ctx.user_name, timeline.recaps if timeline else ())
    plain = [*kept_recaps(rendered_window[:drop_oldest], summary_chars), *rendered_window[drop_oldest:]]
    window, notes = place_notes(plain, ctx.placement.at_depth, _env(ctx, card=False))
    passages = passages_layer(ctx)
    tail = tail_text(ctx, state)
    note_before, note_after = (expand(n, _env(ctx, card=True)).strip() for n in (ctx.placement.note_before_card, ctx.placement.note_after_card))
    stable = "\n\n".join(part for part in (note_before, card, note_after, profile, world, pinned) if part)
    system = "\n\n".join(part for part in (stable, memory, memos) if part)
    speakers = [ctx.user_name, ctx.character.display_name, *(ctx.scene.others if ctx.scene else ())]
    head: ChatMessage = {"role": "system", "content": system, "speakers": speakers}
    if memory or memos:
        head["cache_split"] = len(stable)  # where card, profile, world and pins end: a second cache breakpoint for Anthropic
    messages: list[ChatMessage] = [head, *window]
    closing = "\n\n".join(part for part in (passages, tail) if part)
    if closing:
        messages.append({"role": "system", "content": closing})
    layers = [
        *([Layer("authors_note", note_before)] if note_before else []),
        Layer("card", card),
        *([Layer("authors_note", note_after)] if note_after else []),
        *([Layer("profile", profile)] if profile else []),
        *([Layer("world", world)] if world else []),
        *([Layer("pinned", pinned)] if pinned else []),
        Layer("memory", memory),
        *([Layer("memos", memos)] if ctx.memo_layer else []),
        Layer("window", render(plain), messages=len(plain)),
        *(Layer(name, text, messages=placed) for name, text, placed in note_layers(notes)),
        *([Layer("passages", passages)] if passages else []),
        Layer("tail", tail),
    ]
    stable_shown, new_shown = selected_diary(ctx, state)
    shown = [*([] if drop_diary else stable_shown), *new_shown]
    memories: list[tuple[datetime, str, float | None]] = [(e.created_at, f"diary: {e.content}", ctx.strengths.get(e.id)) for e in shown]
    if memos or (state.new_memos and "memos" not in ctx.hidden):
        shown_memos = [*(state.memos if memos else []), *([] if "memos" in ctx.hidden else state.new_memos)]
        memories += [(m.last_at or m.created_at, f"memo: {memo_text(m)}", ctx.memo_strengths.get(m.id)) for m in shown_memos if not m.gap]
    return AssembledPrompt(messages=messages, layers=layers, memories=memories, recalled=list(ctx.recalled),
                           passages=[p.why(ctx.tz) for p in ctx.passages] if passages else [], window_plain=plain, notes=notes)
