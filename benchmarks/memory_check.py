"""The memory check's figures, over the same code as `omoide memory check`.

    python benchmarks/memory_check.py --oracle                # the design alone (seconds)
    python benchmarks/memory_check.py --oracle --padding 40   # long enough to see each style's horizon
    python benchmarks/memory_check.py                         # your configured backend (minutes to hours)
    python benchmarks/memory_check.py --base-url http://127.0.0.1:8080/v1 --arms window,summary,memos

Prints the tables `omoide memory check` prints, the machine's load average
beside them (a figure timed beside other work is preliminary), and with
--json-out FILE writes the whole report. Runs in a throw-away data directory.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))

from rich.console import Console  # noqa: E402

from omoide.chat.runtime import make_summarizer  # noqa: E402
from omoide.check.arms import ARMS, arm  # noqa: E402
from omoide.check.oracle import OracleBackend  # noqa: E402
from omoide.check.report import show  # noqa: E402
from omoide.check.run import CheckReport, run_check  # noqa: E402
from omoide.config.settings import load_settings  # noqa: E402
from omoide.llm.base import Backend  # noqa: E402
from omoide.llm.factory import make_backend  # noqa: E402


async def main(args: argparse.Namespace) -> CheckReport:
    overrides: dict[str, object] = {}
    if args.base_url:
        overrides |= {"backend": "openai", "base_url": args.base_url}
    if args.model:
        overrides["model"] = args.model
    if args.context_size:
        overrides["context_size"] = args.context_size
    settings = load_settings(**overrides)
    backend: Backend = OracleBackend() if args.oracle else make_backend(settings)
    summarizer = None if args.oracle else make_summarizer(settings, backend)
    arms = [arm(name) for name in args.arms.split(",")] if args.arms else list(ARMS)
    done = 0

    def advance(n: int) -> None:
        nonlocal done
        done += n
        if done % 25 == 0:
            print(f"  {done} turns", file=sys.stderr, flush=True)

    try:
        return await run_check(settings, backend, arms=arms, padding=args.padding, summarizer=summarizer,
                               judge=backend if args.judge and not args.oracle else None, oracle=args.oracle,
                               advance=advance, on_arm=lambda a: print(f"arm {a.name}", file=sys.stderr, flush=True))
    finally:
        for opened in {id(b): b for b in (backend, summarizer) if b is not None}.values():
            await opened.aclose()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--oracle", action="store_true", help="the oracle server instead of a model")
    parser.add_argument("--arms", help=f"comma-separated, of: {', '.join(a.name for a in ARMS)}")
    parser.add_argument("--padding", type=int, help="turns of ordinary talk each evening")
    parser.add_argument("--base-url", help="an OpenAI-compatible server (overrides the config)")
    parser.add_argument("--model", help="the model name to send")
    parser.add_argument("--context-size", type=int, help="the model's context window")
    parser.add_argument("--judge", action="store_true", help="ask the model to judge each answer too")
    parser.add_argument("--answers", action="store_true", help="print every answer")
    parser.add_argument("--json-out", type=Path, help="write the whole report as JSON here")
    options = parser.parse_args()
    report = asyncio.run(main(options))
    show(Console(), report, with_answers=options.answers)
    if options.json_out:
        options.json_out.write_text(json.dumps(report.as_json(), ensure_ascii=False, indent=1) + "\n")
