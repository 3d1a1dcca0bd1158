"""Prompt tokens per turn with the memory of issue 32 (passages that come to
mind, corrections, pins) against the summary style without it.

    python benchmarks/memory_tokens.py [--scenario weeks-1 ...] [--oracle writer|reader]

A shipped scenario of the memory check (src/omoide/check/scenarios/; weeks-1
is 372 messages over 12 days, months-1 2,074 over 30) is played twice through
the check's own runner (real chat sessions, a real SQLite file, memory work
done as the turns go, days on the session's clock), on one of the check's
oracles, which need no model (the writer oracle's summaries keep what an
extractive writer picks; the reader oracle's every line that tells a fact):

    with     the default settings: memory_style 'summary' with passages,
             corrections and pins on (the check's `summary` arm)
    without  the same, with /amnesia passages corrections pinned

Every turn's prompt, as the session built it for the reply (after the fit to
the context), is counted with the embedded SmolLM2's tokenizer, laid out as
that model reads it; the two plays take the same turns, so they are compared
turn by turn. Printed: the mean tokens of each, the mean, median and largest
ratio (and the turn it came at), and the ratio of the totals. Target (issue
32): at most 1.3x.

Not covered: the memos and both styles, a model's own memory work (its
summaries are longer or shorter than the oracle's), the world (the arms leave
it out), and scenes' speakers other than the host (counted like the host's).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

from omoide.check.arms import Arm, arm
from omoide.check.oracle import Kind, OracleBackend
from omoide.check.results import ArmResult
from omoide.check.runner import ArmRun
from omoide.check.scenario import Scenario, shipped
from omoide.config.settings import Settings
from omoide.llm.base import ChatMessage, TokenCount

NEW_TIERS = ("passages", "corrections", "pinned")


class Counted(OracleBackend):
    """The check's oracle, counting prompts with the embedded model's tokenizer."""

    def __init__(self, kind: Kind, tokenizer: object) -> None:
        super().__init__(kind)
        self.tokenizer = tokenizer

    async def count_tokens(self, messages: list[ChatMessage]) -> TokenCount:
        result: TokenCount = await self.tokenizer.count_tokens(messages)  # type: ignore[attr-defined]
        return result


async def play(chosen: Arm, scenario: Scenario, settings: Settings, backend: Counted) -> ArmResult:
    result = await ArmRun(chosen, scenario, settings, backend).run()
    if result.error:
        raise SystemExit(f"{scenario.name}, {chosen.name}: the play stopped: {result.error}")
    return result


def compare(name: str, on: ArmResult, off: ArmResult) -> None:
    if [t.phase for t in on.turns] != [t.phase for t in off.turns]:
        raise SystemExit(f"{name}: the two plays took different turns ({len(on.turns)} and {len(off.turns)})")
    sources = {t.token_source for t in [*on.turns, *off.turns]}
    ratios = [a.prompt_tokens / b.prompt_tokens for a, b in zip(on.turns, off.turns, strict=True)]
    worst = max(range(len(ratios)), key=ratios.__getitem__)
    with_tokens = [t.prompt_tokens for t in on.turns]
    without_tokens = [t.prompt_tokens for t in off.turns]
    print(f"| {name} | {len(ratios)} | {statistics.mean(with_tokens):,.0f} | {statistics.mean(without_tokens):,.0f} | "
          f"**{statistics.mean(ratios):.2f}x** | {statistics.median(ratios):.2f}x | "
          f"{ratios[worst]:.2f}x (turn {worst + 1}, {on.turns[worst].phase}: {with_tokens[worst]:,} / {without_tokens[worst]:,}) | "
          f"{sum(with_tokens) / sum(without_tokens):.2f}x | {', '.join(sorted(sources))} |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    names = [s.name for s in shipped()]
    parser.add_argument("--scenario", nargs="+", default=["weeks-1"], choices=names, help="shipped scenarios to play")
    parser.add_argument("--oracle", choices=["writer", "reader"], default="writer")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home:  # settings from the defaults, not from a config of yours
        os.environ["OMOIDE_HOME"] = home
        os.environ.pop("OMOIDE_CONFIG", None)
        settings = Settings()
    from omoide.llm.local import LocalBackend

    tokenizer = LocalBackend(settings)
    with_tiers = arm("summary")
    without = replace(with_tiers, name="summary without passages, corrections, pins", hidden=(*with_tiers.hidden, *NEW_TIERS))
    print(f"prompt tokens per turn ({args.oracle} oracle; SmolLM2's tokenizer; load average {os.getloadavg()[0]:.1f}):")
    print("| scenario | turns | with (mean) | without (mean) | ratio, mean | median | largest | of the totals | counted by |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | --- | ---: | --- |")
    for scenario in (s for s in shipped() if s.name in args.scenario):
        on = asyncio.run(play(with_tiers, scenario, settings, Counted(args.oracle, tokenizer)))
        off = asyncio.run(play(without, scenario, settings, Counted(args.oracle, tokenizer)))
        compare(scenario.name, on, off)


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).parents[1]))
    main()
