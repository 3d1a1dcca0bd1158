"""The CPU one arm of the memory check takes on an oracle, in this process.

    python benchmarks/memory_check_arm.py --scenario src/omoide/check/scenarios/months-1.json --arm both
    python benchmarks/memory_check_arm.py --scenario FILE --arm full --oracle writer --profile full.prof

Runs one arm of one scenario exactly as `omoide memory check --oracle` runs it
in a worker process (`ArmRun` on a throw-away data directory) and prints the
CPU-seconds of the process (SQLite's thread included) and of the main thread
alone, and the wall time. CPU time moves much less with other work on the
machine than wall time, so two versions of the code are compared by it, run
one after the other in one sitting. `--profile FILE` writes a cProfile of the
main thread's CPU (pstats format) as well; profiling slows it about threefold.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import os
import time
from pathlib import Path

from omoide.check.arms import arm
from omoide.check.oracle import OracleBackend
from omoide.check.runner import ArmRun
from omoide.check.scenario import load
from omoide.config.settings import load_settings


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scenario", type=Path, required=True, help="a scenario file")
    parser.add_argument("--arm", required=True, help="an arm's name (window, full, search, summary, both+world ...)")
    parser.add_argument("--oracle", choices=("reader", "writer"), default="reader")
    parser.add_argument("--profile", type=Path, help="write a cProfile of the main thread's CPU here")
    options = parser.parse_args()
    scenario = load(options.scenario)
    run = ArmRun(arm(options.arm), scenario, load_settings(), OracleBackend(options.oracle))
    profile = cProfile.Profile(time.thread_time) if options.profile else None
    load_before = os.getloadavg()[0]
    cpu, main_thread, wall = time.process_time(), time.thread_time(), time.perf_counter()
    if profile is not None:
        profile.enable()
    result = asyncio.run(run.run())
    if profile is not None:
        profile.disable()
        profile.dump_stats(options.profile)
    print(f"{scenario.name} {options.arm} ({options.oracle} oracle, {scenario.turns()} turns): "
          f"{time.process_time() - cpu:.2f} CPU-s, main thread {time.thread_time() - main_thread:.2f} CPU-s, "
          f"{time.perf_counter() - wall:.1f} s wall; load average {load_before:.2f} before, {os.getloadavg()[0]:.2f} after"
          + (f"; error: {result.error}" if result.error else ""))
    return 1 if result.error else 0


if __name__ == "__main__":
    raise SystemExit(main())
