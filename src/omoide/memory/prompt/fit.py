"""Counting a prompt as the backend lays it out, and fitting it to the context."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import replace

from omoide.domain.chat import MemoryState
from omoide.memory.prompt.layers import assemble, card_sections, card_text, cut_card
from omoide.memory.prompt.notes import layer_tokens
from omoide.memory.prompt.model import AssembledPrompt, CardCut, CountPrompt, PromptContext


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
    ctx: PromptContext, state: MemoryState, count: CountPrompt, budget: int, *, full: AssembledPrompt | None = None,
    kept_before: int | None = None,
) -> AssembledPrompt:
    """The fullest prompt that fits `budget` tokens. Drops, in order: the oldest
    window messages (never the last one), the stable diary, then the older part
    of the summary. What was dropped is listed for the inspector. `full` is
    `assemble(ctx, state)` when the caller has already built it. `kept_before`,
    the window messages the previous turn's prompt kept, is where the search
    for how many to drop starts (a hint: the result is the same without it)."""
    prompt = full or assemble(ctx, state)
    window_size = next(layer.messages for layer in prompt.layers if layer.name == "window")
    if await count(prompt.messages) <= budget:
        prompt.budget = budget
        return await count_prompt(prompt, count)
    whole = prompt.window_plain  # rendered once: every assembly below drops from it
    tried: dict[int, AssembledPrompt | None] = {}

    async def fits(drop: int) -> bool:
        """Whether the prompt without the `drop` oldest window messages fits (kept when it does)."""
        if drop not in tried:
            candidate = assemble(ctx, state, drop_oldest=drop, rendered_window=whole)
            tried[drop] = candidate if await count(candidate.messages) <= budget else None
        return tried[drop] is not None

    # Drop whole window messages, fewest first: the fewest that fit.
    start = window_size - kept_before if kept_before is not None else None
    drop = await fewest_that_fit(1, max(window_size - 1, 0), fits, start=start)
    best = tried[drop] if drop is not None else None
    if best is not None:
        best.dropped = [f"the {drop} oldest message(s) of the raw window"]
    if best is None:
        dropped = [f"the {max(window_size - 1, 0)} oldest message(s) of the raw window"] if window_size > 1 else []
        drop = max(window_size - 1, 0)
        best = assemble(ctx, state, drop_oldest=drop, drop_diary=True, rendered_window=whole)
        dropped.append("the diary block" + (" and the memo layer" if state.memos else ""))
        summary = state.summary.content if state.summary else ""
        chars = len(summary)
        while await count(best.messages) > budget and chars > 0:
            chars = chars // 2
            best = assemble(ctx, state, drop_oldest=drop, drop_diary=True, summary_chars=chars, rendered_window=whole)
        if summary and chars < len(summary):
            dropped.append(f"the oldest {len(summary) - chars} characters of the summary")
        card = len(card_text(ctx))
        card_chars = card
        while await count(best.messages) > budget and card_chars > 0:
            card_chars = card_chars * 3 // 4
            best = assemble(
                ctx, state, drop_oldest=drop, drop_diary=True, summary_chars=0 if summary else None, card_chars=card_chars,
                rendered_window=whole,
            )
        if card_chars < card:
            best.card_cut = await card_cuts(ctx, len(cut_card(card_text(ctx), card_chars)), count)
            best.window_cut = drop
            best.greeting_cut = drop > 0 and bool(state.window) and state.window[0].parent_id is None
            dropped += [cut.phrase() for cut in best.card_cut]
        best.dropped = dropped
    best.budget = budget
    return await count_prompt(best, count)


async def fewest_that_fit(low: int, high: int, fits: Callable[[int], Awaitable[bool]], *,
                          start: int | None = None) -> int | None:
    """The least n in [low, high] for which `fits(n)`, None when none does;
    `fits` holds for every n above one for which it holds (dropping more never
    makes a prompt longer). By bisection; with `start` (the last turn's answer,
    which moves by a message or two), first by steps doubling away from it until
    the answer is bracketed: a few counts instead of a bisection over the window."""
    found: int | None = None
    if start is not None and low <= high:
        start = min(max(start, low), high)
        step = 1
        if await fits(start):
            found = start
            while found - step >= low and await fits(found - step):
                found, step = found - step, step * 2
            low, high = max(low, found - step + 1), found - 1
        else:
            below = start
            while below + step <= high and not await fits(below + step):
                below, step = below + step, step * 2
            if below + step <= high:
                found = below + step
            low, high = below + 1, min(high, below + step - 1)
    while low <= high:
        mid = (low + high) // 2
        if await fits(mid):
            found, high = mid, mid - 1
        else:
            low = mid + 1
    return found


async def card_cuts(ctx: PromptContext, kept: int, count: CountPrompt) -> list[CardCut]:
    """Which of the card's fields the fit left out, whole or their end, when the
    card's first `kept` characters are sent; with the tokens each lost."""
    sections = card_sections(ctx)
    joined = "\n\n".join(text for _, text in sections)
    kept += len(joined) - len(joined.lstrip())
    empty = await count([{"role": "system", "content": ""}])
    cuts: dict[str, CardCut] = {}
    start = 0
    for field, text in sections:
        end = start + len(text)
        if end > kept:
            lost = text if start >= kept else text[kept - start:]
            tokens = max(await count([{"role": "system", "content": lost}]) - empty, 1)
            had = cuts.get(field)
            cuts[field] = CardCut(field, (had.tokens if had else 0) + tokens, whole=start >= kept and (had is None or had.whole))
        start = end + 2
    return list(cuts.values())


def shared_prefix_chars(previous: str, current: str) -> int:
    limit = min(len(previous), len(current))
    i = 0
    step = 4096
    while i + step <= limit and previous[i : i + step] == current[i : i + step]:
        i += step
    while i < limit and previous[i] == current[i]:
        i += 1
    return i
