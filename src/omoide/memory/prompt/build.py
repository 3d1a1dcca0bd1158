"""The one place a prompt is decided: from what the session gathered to the
messages and their layer map.

Pure but for the injected token count and the gathered random source (a
seeded one repeats every draw): no store, no backend, no clock of its own.
Lore matching runs in a thread (linear-time, but long messages times many keys
must not hold up the event loop of a streaming reply)."""

from __future__ import annotations

import asyncio
import random
from dataclasses import replace

from omoide.characters.lore_engine import Timers, label, scan_books, sources_of
from omoide.characters.macros import MacroEnv, expand
from omoide.characters.notes import AuthorsNote, character_note
from omoide.characters.placement import place
from omoide.characters.regex_scripts import load_scripts
from omoide.memory.prompt.budget import corrections_sent, left_out_notices, pins_sent
from omoide.memory.prompt.fit import fit, shared_prefix_chars
from omoide.memory.prompt.model import AssembledPrompt, CountPrompt, LoreState, PromptContext, PromptInputs
from omoide.memory.prompt.sent import sent_lore, sent_window

MIN_BUDGET = 256
"""Tokens a prompt may always take, whatever max_tokens leaves of the context."""


def _estimate(text: str) -> int:
    return len(text) // 4 + 1


def plain_lore_state(inputs: PromptInputs) -> LoreState:
    """What the lore rules read when nothing was gathered: only {{char}} and {{user}}."""
    env = MacroEnv(char=inputs.character.display_name, user=inputs.user_name)
    return LoreState(macros=env, card_macros=env, timers=Timers(), authors_note=AuthorsNote(), note_due=False,
                     chat_length=len(inputs.state.window), rng=random.Random())


async def build_prompt(inputs: PromptInputs, count: CountPrompt) -> AssembledPrompt:
    options, hidden, speaker = inputs.options, inputs.hidden, inputs.character
    lore = inputs.lore or plain_lore_state(inputs)
    books = list(inputs.lorebooks)
    own = speaker.character_book.token_budget if speaker.character_book is not None else None
    budget = own if own is not None else options.context_size * options.lore_budget_percent // 100
    live = lore.macros
    scripts = load_scripts(speaker.extensions)
    state = replace(inputs.state, window=sent_window(inputs.state.window, live, scripts))
    result = await asyncio.to_thread(
        scan_books, sources_of(speaker.character_book, speaker.id, books), [m.content for m in state.window],
        timers=lore.timers, recursive=any(b.recursive_scanning for b in books), rng=lore.rng,
        expand_key=lambda key: expand(key, live), expand_content=lambda text: expand(text, live),
        count_tokens=_estimate, budget=max(budget, 0),
    )
    placement = place(sent_lore(result, live, scripts), character_note=character_note(speaker), note=lore.authors_note, note_due=lore.note_due)
    gossip = "" if "world" in hidden else inputs.gossip  # the layers hide the rest of what /amnesia names
    pinned, pins_left = pins_sent(() if "pinned" in hidden else inputs.pinned, options.context_size)
    fixes, fixes_left = corrections_sent(() if "corrections" in hidden else inputs.corrections, options.context_size)
    ctx = PromptContext(
        character=speaker,
        user_name=inputs.user_name,
        user_persona=inputs.user_persona,
        tools=inputs.tools,
        diary_lines=options.diary_lines,
        now=inputs.now,
        tz=inputs.tz,
        memo_layer=options.memo_layer,
        profile=inputs.profile,
        pinned=pinned,
        corrections=fixes,
        recall_tool=options.recall_tool,
        diary_selection=options.diary_selection,
        strengths=inputs.strengths,
        memo_strengths=inputs.memo_strengths,
        hidden=hidden,
        recalled=list(inputs.recalled),
        passages=list(inputs.passages),
        world="\n\n".join(p for p in (inputs.world, gossip) if p),
        world_notes=inputs.world_notes,
        scene=inputs.scene,
        placement=placement,
        macros=lore.macros,
        card_macros=lore.card_macros,
    )
    prompt = await fit(ctx, state, count, max(options.context_size - options.max_tokens, MIN_BUDGET),
                       kept_before=inputs.kept_before)
    prompt.gossip = inputs.gossip_target if gossip else ""
    prompt.skipped_lore = list(result.skipped)
    prompt.notices += [f"{speaker.display_name}'s card: {problem}" for problem in scripts.problems]
    prompt.notices += left_out_notices(speaker.display_name, (pins_left, len(pinned) + pins_left),
                                       (fixes_left, len(fixes) + fixes_left))
    prompt.lore_started = [f.entry_key for f in result if f.started]
    prompt.lore = [f"{label(f.entry)}: {f.reason}" for f in result]
    prompt.lore += [f"{label(s.entry)} skipped: {s.reason}" for s in result.skipped]
    prompt.lore += [f"{line} (left out)" for line in placement.left_out]
    rendered = prompt.rendered()
    if inputs.previous is not None and rendered:
        shared = shared_prefix_chars(inputs.previous, rendered)
        prompt.shared_tokens = round(prompt.total_tokens * shared / len(rendered))
    return prompt
