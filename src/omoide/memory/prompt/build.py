"""The one place a prompt is decided: from what the session gathered to the
messages and their layer map.

Pure but for the injected token count: no store, no backend, no clock of its
own. Lore matching runs in a thread (linear-time, but long messages times many
keys must not hold up the event loop of a streaming reply)."""

from __future__ import annotations

import asyncio

from omoide.characters import lorebook
from omoide.characters.model import LoreEntry
from omoide.memory.prompt.fit import fit, shared_prefix_chars
from omoide.memory.prompt.model import AssembledPrompt, CountPrompt, PromptContext, PromptInputs

MIN_BUDGET = 256
"""Tokens a prompt may always take, whatever max_tokens leaves of the context."""


def entry_label(entry: LoreEntry) -> str:
    return entry.name or (entry.keys[0] if entry.keys else "entry")


async def build_prompt(inputs: PromptInputs, count: CountPrompt) -> AssembledPrompt:
    options = inputs.options
    hidden = inputs.hidden
    recent = [m.content for m in inputs.state.window]
    lore_budget = options.context_size * options.lore_budget_percent // 100
    books = list(inputs.lorebooks)
    scans = await asyncio.to_thread(lambda: [lorebook.scan(book, recent, budget=lore_budget) for book in books])
    fired = [hit for result in scans for hit in result]
    skipped = [skip for result in scans for skip in result.skipped]
    gossip = "" if "world" in hidden else inputs.gossip  # the layers hide the rest of what /amnesia names
    ctx = PromptContext(
        character=inputs.character,
        user_name=inputs.user_name,
        user_persona=inputs.user_persona,
        tools=inputs.tools,
        diary_lines=options.diary_lines,
        now=inputs.now,
        tz=inputs.tz,
        constant_lore=[f.entry.content for f in fired if f.reason == "constant"],
        triggered_lore=[f.entry.content for f in fired if f.reason != "constant"],
        memo_layer=options.memo_layer,
        profile=inputs.profile,
        recall_tool=options.recall_tool,
        diary_selection=options.diary_selection,
        strengths=inputs.strengths,
        memo_strengths=inputs.memo_strengths,
        hidden=hidden,
        recalled=list(inputs.recalled),
        world="\n\n".join(p for p in (inputs.world, gossip) if p),
        world_notes=inputs.world_notes,
        scene=inputs.scene,
    )
    budget = max(options.context_size - options.max_tokens, MIN_BUDGET)
    prompt = await fit(ctx, inputs.state, count, budget)
    prompt.gossip = inputs.gossip_target if gossip else ""
    prompt.skipped_lore = [(entry_label(s.entry), s.reason) for s in skipped]
    prompt.lore = [f"{entry_label(f.entry)}: {f.reason}" for f in fired]
    prompt.lore += [f"{name} skipped: {reason}" for name, reason in prompt.skipped_lore]
    rendered = prompt.rendered()
    if inputs.previous is not None and rendered:
        shared = shared_prefix_chars(inputs.previous, rendered)
        prompt.shared_tokens = round(prompt.total_tokens * shared / len(rendered))
    return prompt
