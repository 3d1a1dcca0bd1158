"""What memory in the story's own words keeps when the replies are a small model's,
in seconds instead of the hour a real run of the embedded model takes.

    python benchmarks/memory_replay.py --scenario src/omoide/check/scenarios/weeks-1.json
    python benchmarks/memory_replay.py --scenario FILE --arm summary+world --replies replies.json

Plays one arm of one scenario as `omoide memory check` does (`ArmRun` on a
throw-away data directory) with memory work kept in the story's own words, as
on the embedded models (`memory_writer` 'auto'), and with every reply taken in
turn from `--replies`: by default, replies SmolLM2-135M wrote in real runs
(benchmarks/data/smollm2-replies.json), long and full of names, numbers and
places it made up, which is what own-words memory must not let crowd out what
the user said. Which reply lands beside which fact changes what is kept, so
the arm is played from `--rotations` starting points in the replies (5); it
prints, per question, in how many of them the prompt held the fact (the
check's "kept"), the kept % per category over them all, and the horizons.

This is a probe, not the figure: the replies do not answer what was said, so
the "answered" figure means nothing here, and the passages come to mind from
replies the real model would not have written. The figure is the real run's
(docs/memory-check.md); this tells in seconds whether a change to own-words
memory is worth that run. A `--replies` file is a JSON list of strings, or an
object with a "replies" list.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import sys
import tempfile
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from omoide.check.arms import arm
from omoide.check.runner import ArmRun
from omoide.check.scenario import load
from omoide.config.settings import load_settings

sys.path.insert(0, str(Path(__file__).parents[1]))
from tests.scripted import ScriptedBackend  # noqa: E402

DEFAULT_REPLIES = Path(__file__).parent / "data" / "smollm2-replies.json"


def replayed(replies: Sequence[str], start: int = 0) -> ScriptedBackend:
    """A backend that answers every request with the next recorded reply, as the embedded
    models do their memory work: in the story's own words (`summarizes = False`)."""
    following = itertools.islice(itertools.cycle(replies), start, None)
    backend = ScriptedBackend(default=lambda _messages: [next(following)], model="replayed")
    backend.summarizes = False  # type: ignore[attr-defined]
    return backend


def read_replies(path: Path) -> list[str]:
    data = json.loads(path.read_text(encoding="utf-8"))
    replies = data.get("replies") if isinstance(data, dict) else data
    if not isinstance(replies, list) or not all(isinstance(r, str) for r in replies) or not replies:
        raise SystemExit(f"{path}: expected a JSON list of reply strings, or an object with a 'replies' list")
    return replies


async def replay(scenario_path: Path, arm_name: str, replies: list[str], rotations: int) -> None:
    """Play the arm `rotations` times, each with the replies starting further along, and print how often each
    question's fact was in its prompt: which reply lands beside which fact changes what is kept."""
    scenario = load(scenario_path)
    kept: dict[str, list[bool]] = defaultdict(list)
    category: dict[str, str] = {}
    horizons: dict[str, list[str]] = defaultdict(list)
    for n in range(rotations):
        with tempfile.TemporaryDirectory() as home:
            os.environ["OMOIDE_HOME"] = home
            backend = replayed(replies, start=n * len(replies) // rotations)
            result = await ArmRun(arm(arm_name), scenario, load_settings(), backend).run()  # type: ignore[arg-type]
        if result.error:
            raise SystemExit(f"the arm failed: {result.error}")
        for answer in result.answers:
            category[answer.question] = answer.category
            if answer.kept is not None:
                kept[answer.question].append(answer.kept)
        for h in result.horizons:
            horizons[h.fact].append(f"{'≥' if h.censored else ''}{h.messages}")
    print(f"{scenario.name}, {arm_name}: {len(replies)} replies replayed from {rotations} starting points")
    by_category: dict[str, list[bool]] = defaultdict(list)
    for question, cat in category.items():
        marks = kept.get(question, [])
        by_category[cat].extend(marks)
        print(f"  {question:<10} {cat:<14} " + (f"kept {sum(marks)} of {len(marks)}" if marks else "n/a"))
    print("kept %: " + ", ".join(f"{c} {round(100 * sum(v) / len(v))}" for c, v in by_category.items() if v))
    print("horizons (messages a fact stayed in every prompt): "
          + ", ".join(f"{fact} {'/'.join(values)}" for fact, values in horizons.items()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scenario", type=Path, required=True, help="a scenario file")
    parser.add_argument("--arm", default="summary+world", help="an arm's name (default: summary+world)")
    parser.add_argument("--replies", type=Path, default=DEFAULT_REPLIES, help="the replies to replay (JSON)")
    parser.add_argument("--rotations", type=int, default=5, help="starting points in the replies (default: 5)")
    args = parser.parse_args()
    if args.rotations < 1:
        parser.error("--rotations must be at least 1")
    asyncio.run(replay(args.scenario, args.arm, read_replies(args.replies), args.rotations))


if __name__ == "__main__":
    main()
