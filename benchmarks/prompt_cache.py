"""How much of each turn's prompt a prompt cache can reuse, and what a turn
costs the client.

    python benchmarks/prompt_cache.py [--turns 300] [--history 100000]

1. A scripted 300-turn session for each memory_style: the default 'summary'
   (15 recent, 20 threshold, 50 diary lines), 'memos' (16 raw messages and 15
   memos of 8 messages, rolling off 5 at a time or one at a time) and 'both'. Every prompt is rendered with the embedded
   model's chat template and tokenized with its tokenizer (what llama.cpp
   reuses), and compared with the previous turn's: the share of tokens that is
   a common prefix. The same is measured, in the same run and on the same
   states, for two baselines: a fair one (omoide's own card, memory and tail,
   the clock at the end, but a plain window sliding over the last 15
   messages), and a naive one (the clock and the summary at the top, then the
   sliding window). The share is also given for the turns between
   compressions alone, and summary and diary compressions are counted apart.
2. Client-side time per turn (prompt assembly and storage, the model being
   instant) in a fresh chat and in one with `--history` messages stored, in
   'summary' and in 'memos' (a memo for every 8 stored messages).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[1]))

from make_chat import make_chat, sentence  # noqa: E402
from prefix import common_prefix  # noqa: E402

from omoide.characters.library import find_character  # noqa: E402
from omoide.config.settings import Settings  # noqa: E402
from omoide.memory.events import MemoryWorkDone  # noqa: E402
from omoide.llm.base import ChatMessage  # noqa: E402
from omoide.llm.local import LocalBackend  # noqa: E402
from omoide.llm.stamps import stamp  # noqa: E402
from omoide.memory.prompt.layers import assemble, card_text, memory_text, window_messages  # noqa: E402
from omoide.memory.prompt.model import PromptContext  # noqa: E402
from omoide.chat.session import ChatSession  # noqa: E402
from omoide.store import Store  # noqa: E402
from tests.scripted import ScriptedBackend  # noqa: E402


def scripted_reply(rng: random.Random):  # type: ignore[no-untyped-def]
    def reply(messages: list[ChatMessage]) -> list[str]:
        text = sentence(rng, rng.randint(15, 45))
        if rng.random() < 0.08:
            text += f" <save_memory>{sentence(rng, rng.randint(8, 20))}</save_memory>"
        return [text]

    return reply


def scripted_summary(rng: random.Random):  # type: ignore[no-untyped-def]
    """The summarizer: a summary, or highlights when it is asked for a memo."""
    def summary(messages: list[ChatMessage]) -> list[str]:
        if "Journey Highlights" in str(messages[0].get("content", "")):
            return ["\n".join(f"【Highlight {i}】: {sentence(rng, rng.randint(10, 18))}" for i in (1, 2, 3)[: rng.randint(2, 3)])]
        body = " ".join(sentence(rng, 20) for _ in range(5))
        return [f"They talked for a while and she seemed glad of it. {body}"]

    return summary


def naive_prompt(ctx: PromptContext, memory, path) -> list[ChatMessage]:  # type: ignore[no-untyped-def]
    """What many clients do: volatile facts at the top, a window that slides every turn."""
    top = [f"Current date and time: {ctx.now:%A %d %B %Y, %H:%M}."]
    stable = memory_text(ctx, memory)
    system = "\n\n".join([*top, card_text(ctx), stable] if stable else [*top, card_text(ctx)])
    return [{"role": "system", "content": system}, *window_messages(path[-15:], None)]


def fair_prompt(ctx: PromptContext, memory, path) -> list[ChatMessage]:  # type: ignore[no-untyped-def]
    """omoide's content and order (card, memory, window, then the clock and the
    other volatile lines), but with a plain window sliding over the last 15
    messages instead of one that grows between compressions."""
    ours = assemble(ctx, memory).messages
    tail = [ours[-1]] if len(ours) > 1 and ours[-1]["role"] == "system" else []
    return [ours[0], *window_messages(path[-15:], None), *tail]


@dataclass
class Reuse:
    ours: list[float] = field(default_factory=list)
    ours_between: list[float] = field(default_factory=list)
    """Turns with no compression since the previous turn."""
    fair: list[float] = field(default_factory=list)
    naive: list[float] = field(default_factory=list)
    summaries: int = 0
    diaries: int = 0
    memos: int = 0


async def cache_reuse(turns: int, tokenizer: LocalBackend, **memory_settings: object) -> Reuse:
    rng = random.Random(11)
    settings = Settings(user_name="Kai", **memory_settings)  # type: ignore[arg-type]
    store = await Store.open()
    character = find_character("suzune")
    done: list[MemoryWorkDone] = []
    session = await ChatSession.open(
        store, character, settings, ScriptedBackend(default=scripted_reply(rng)),
        summarizer=ScriptedBackend(default=scripted_summary(rng)),
        on_memory_event=lambda e: done.append(e) if isinstance(e, MemoryWorkDone) else None,
    )
    clock = [datetime(2026, 4, 1, 20, 0, tzinfo=UTC)]
    session.clock = lambda: clock[0]
    result = Reuse()
    previous: tuple[list[int], list[int], list[int]] | None = None
    compressions_before = 0
    for turn in range(turns):
        clock[0] += timedelta(minutes=rng.randint(1, 30))
        async for _ in session.send(sentence(rng, rng.randint(5, 25))):
            pass
        assert session.last_prompt is not None
        tokens = tokenizer.tokenize(tokenizer.render_prompt(session.last_prompt.messages))
        head = (await session.refresh()).head_id
        parent = (await store.messages.get(head)).parent_id
        memory = await store.memory.state(parent)
        path = await store.messages.path(parent, limit=15)
        ctx = PromptContext(character=character, user_name="Kai", now=clock[0], tools=session.turns.tools_mode,
                            diary_lines=settings.memory.diary_prompt_lines)
        fair_tokens = tokenizer.tokenize(tokenizer.render_prompt(fair_prompt(ctx, memory, path)))
        naive_tokens = tokenizer.tokenize(tokenizer.render_prompt(naive_prompt(ctx, memory, path)))
        if previous is not None:
            share = common_prefix(previous[0], tokens) / len(tokens)
            result.ours.append(share)
            if len(done) == compressions_before:
                result.ours_between.append(share)
            result.fair.append(common_prefix(previous[1], fair_tokens) / len(fair_tokens))
            result.naive.append(common_prefix(previous[2], naive_tokens) / len(naive_tokens))
        previous = (tokens, fair_tokens, naive_tokens)
        compressions_before = len(done)
        await session.wait_for_memory_work()
    await store.close()
    result.summaries = sum(1 for e in done if e.kind == "summary")
    result.diaries = sum(1 for e in done if e.kind == "diary")
    result.memos = sum(1 for e in done if e.kind not in ("summary", "diary"))
    return result


async def per_turn_overhead(history: int, style: str = "summary", turns: int = 30) -> float:
    """In 'memos' the chat has a memo for every batch of 8 (make_chat --memos)."""
    chat_id = await make_chat(history, memos=style == "memos") if history else None
    store = await Store.open()
    rng = random.Random(3)
    character = find_character("suzune")
    session = await ChatSession.open(
        store, character, Settings(user_name="Kai", memory_style=style), ScriptedBackend(default=lambda m: ["Mm."]),  # type: ignore[arg-type]
        chat_id=chat_id, summarizer=ScriptedBackend(default=scripted_summary(rng)),
    )
    times = []
    for _ in range(turns):
        t0 = time.perf_counter()
        async for _ in session.send(sentence(rng, 12)):
            pass
        times.append(time.perf_counter() - t0)
        await session.wait_for_memory_work()
    await store.close()
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description="Prompt-cache reuse and per-turn client overhead.")
    parser.add_argument("--turns", type=int, default=300, help="turns for the reuse figure (0 skips it)")
    parser.add_argument("--history", type=int, nargs="+", default=[0, 1_000, 100_000])
    args = parser.parse_args()
    tokenizer = LocalBackend(Settings(context_size=8192))
    if args.turns:
        print_reuse(args.turns, tokenizer)
    print_overhead(args.history)


def print_reuse(turns: int, tokenizer: LocalBackend) -> None:
    print(f"prompt-cache reuse over {turns} turns: the share of each prompt that is a prefix of the previous one")
    print("(SmolLM2's chat template and tokenizer, as llama.cpp reuses them)")
    print(f"  {'memory_style and settings':<52} | {'omoide':>7} | {'between':>7} | {'fair':>7} | {'naive':>7} | summary / diary / memo work")
    for label, memory in (
        ("summary: seed defaults (recent 15, threshold 20)", {}),
        ("summary: recent 15, threshold 40", {"summary_threshold": 40}),
        ("memos: 16 raw, 15 memos of 8, roll off by 5", {"memory_style": "memos"}),
        ("memos: the same, rolling off one at a time", {"memory_style": "memos", "memo_roll_step": 1}),
        ("both: summary defaults and memos", {"memory_style": "both"}),
    ):
        with tempfile.TemporaryDirectory() as home:
            os.environ["OMOIDE_HOME"] = home
            r = asyncio.run(cache_reuse(turns, tokenizer, **memory))
        print(f"  {label:<52} | {statistics.mean(r.ours):7.1%} | {statistics.mean(r.ours_between):7.1%} | "
              f"{statistics.mean(r.fair):7.1%} | {statistics.mean(r.naive):7.1%} | {r.summaries} / {r.diaries} / {r.memos}", flush=True)
    print("  between = omoide, only the turns with no memory work done since the previous turn")
    print("  fair    = omoide's content and order (clock at the end), but a plain window sliding over the last 15 messages")
    print("  naive   = clock and summary at the top, then the sliding window")


def print_overhead(histories: list[int]) -> None:
    print("client-side time per turn (assembly + storage; the model answers instantly):")
    for style in ("summary", "memos"):
        for history in histories:
            with tempfile.TemporaryDirectory() as home:
                os.environ["OMOIDE_HOME"] = home
                median = asyncio.run(per_turn_overhead(history, style))
            print(f"  {style:<8} {history:>7,} messages stored: {median * 1000:6.2f} ms (median of 30 turns)", flush=True)


if __name__ == "__main__":
    main()
