"""LoCoMo conversations through the memory check (src/omoide/check/locomo.py has
the conversion rules).

    python benchmarks/locomo.py ../shared/data/locomo/26.json ../shared/data/locomo/30.json --oracle
    python benchmarks/locomo.py FILE --oracle --oracles writer --arms summary,summary+world
    python benchmarks/locomo.py FILE --arms window,summary+world --json out.json     # your configured model
    python benchmarks/locomo.py FILE --out-scenario scenarios/                       # keep the converted scenario

Each FILE is one LoCoMo conversation (an object with speaker_a, speaker_b,
session_N, session_N_date_time and qa; the dataset's locomo10.json, a list of
ten of them, is read as ten conversations). For each conversation it prints the
LoCoMo categories kept and dropped (with why), then runs the scenario on the
same machinery as `omoide memory check` (a throw-away data directory, every
arm; with --oracle both oracles, in worker processes) and prints its tables.
The files are benchmark data: they are read where they are, never copied.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from rich.console import Console

from omoide.check.locomo import CATEGORY_NAMES, Conversion, convert
from omoide.check.report import show
from omoide.check.scenario import Scenario, parse
from omoide.characters.library import find_character
from omoide.errors import OmoideError
from omoide.safe_text import json_text, safe


def conversations(path: Path) -> list[tuple[str, dict[str, Any]]]:
    data = json.loads(path.read_text(encoding="utf-8"))
    if isinstance(data, list):
        return [(str(item.get("sample_id") or f"{path.stem}-{n}"), item) for n, item in enumerate(data, 1)
                if isinstance(item, dict)]
    return [(f"locomo-{path.stem}", data)]  # convert reads a locomo10.json item (qa beside its conversation) too


def counts(console: Console, name: str, conversion: Conversion) -> None:
    console.print(safe(f"\n{name}: LoCoMo questions kept and dropped", "bold"))
    for category in [*CATEGORY_NAMES.values(), *(["unknown"] if "unknown" in conversion.dropped else [])]:
        dropped = conversion.dropped.get(category, {})
        console.print(safe(f"  {category:<12} kept {conversion.kept.get(category, 0):>3}, "
                           f"dropped {sum(dropped.values()):>3}"))
        for why, n in sorted(dropped.items(), key=lambda item: -item[1]):
            console.print(safe(f"      {n:>3}  {why}", "dim"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="+", type=Path, help="LoCoMo conversation files (JSON)")
    parser.add_argument("--oracle", action="store_true", help="run on the oracles instead of your model")
    parser.add_argument("--oracles", help="with --oracle: reader, writer, or both (default)")
    parser.add_argument("--arms", help="comma-separated arms (default: all)")
    parser.add_argument("--json", type=Path, help="write every report and the conversion counts here")
    parser.add_argument("--out-scenario", type=Path, help="also write each converted scenario into this folder")
    parser.add_argument("--host", default="suzune", help="the character who plays speaker_b (default: suzune)")
    options = parser.parse_args()
    if options.oracles and not options.oracle:
        parser.error("--oracles chooses among the oracles of --oracle")

    from omoide.check.arms import ARMS, arm as named_arm
    from omoide.cli.memory_check import ORACLES, _run

    console = Console(width=None if sys.stdout.isatty() else 200)  # a log keeps whole tables
    try:
        arms = [named_arm(a.strip()) for a in options.arms.split(",") if a.strip()] if options.arms else list(ARMS)
    except KeyError as exc:
        parser.error(f"there is no arm called {exc} (arms: {', '.join(a.name for a in ARMS)})")
    kinds = tuple(k.strip() for k in (options.oracles or ",".join(ORACLES)).split(",") if k.strip())
    if unknown := [k for k in kinds if k not in ORACLES]:
        parser.error(f"there is no oracle called {unknown[0]!r} (oracles: reader, writer)")
    host_name = find_character(options.host).display_name
    out: list[dict[str, Any]] = []
    began = time.perf_counter()
    converted: list[tuple[str, Path, Conversion, Scenario]] = []
    for path in options.files:
        try:
            found = conversations(path)
        except (OSError, ValueError) as exc:
            print(f"{path}: not a LoCoMo file ({exc})", file=sys.stderr)
            return 2
        for name, data in found:
            if any(name == c[0] for c in converted):
                name = f"{name}-{len(converted) + 1}"  # two files of one name: the tables tell them apart
            try:
                conversion = convert(data, name=name, host=options.host, host_name=host_name)
            except (ValueError, KeyError, TypeError) as exc:
                print(f"{path} ({name}): {exc}", file=sys.stderr)
                return 2
            converted.append((name, path, conversion, parse(conversion.scenario, f"{path} ({name})")))
            if options.out_scenario:
                options.out_scenario.mkdir(parents=True, exist_ok=True)
                (options.out_scenario / f"{name}.json").write_text(
                    json.dumps(conversion.scenario, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    try:  # one run for all: its worker processes take the longest arms first, of every conversation
        report = asyncio.run(_run(arms, [c[3] for c in converted], kinds if options.oracle else (), None, None))
    except OmoideError as exc:
        print(f"{exc.message} {exc.hint}", file=sys.stderr)
        return 1
    for name, path, conversion, scenario in converted:
        counts(console, name, conversion)
        mine = replace(report, arms=[r for r in report.arms if r.scenario == scenario.name],
                       scenarios=[s for s in report.scenarios if s["name"] == scenario.name])
        show(console, mine)
        out.append({"conversation": name, "file": str(path), "kept": dict(conversion.kept),
                    "dropped": {c: dict(v) for c, v in conversion.dropped.items()}, "report": mine.as_json()})
    load = report.load_before or (0.0, 0.0, 0.0)
    console.print(safe(f"\nall conversations: {time.perf_counter() - began:.0f} s, load average {load[0]:.2f} before, "
                       f"{(report.load_after or load)[0]:.2f} after, on {report.cpus} CPU(s)", "dim"))
    if options.json:
        options.json.write_text(json_text(out, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
