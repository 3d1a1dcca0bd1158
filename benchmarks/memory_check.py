"""The memory check's figures, over the same code as `omoide memory check`.

    python benchmarks/memory_check.py --oracle                    # both oracles, every shipped scenario and arm
    python benchmarks/memory_check.py --oracle --scenario FILE     # one scenario (repeatable)
    python benchmarks/memory_check.py --base-url http://127.0.0.1:8080/v1 --arms window,summary --json-out out.json

Everything after the options below is passed to `omoide memory check` as it
is (--arms, --scenario, --oracle, --oracles, --answers, --judge-url ...).
--base-url, --model and --context-size set the backend for this run only;
--json-out FILE writes the whole report there as well as printing the tables.
Prints how long the run took and the load average beside it (a figure timed
beside other work is preliminary). Runs in a throw-away data directory.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base-url", help="an OpenAI-compatible server (overrides the config)")
    parser.add_argument("--model", help="the model name to send")
    parser.add_argument("--context-size", type=int, help="the model's context window")
    parser.add_argument("--json-out", type=Path, help="write the whole report as JSON here")
    options, rest = parser.parse_known_args()
    env = dict(os.environ)
    if options.base_url:
        env |= {"OMOIDE_BACKEND": "openai", "OMOIDE_BASE_URL": options.base_url}
    if options.model:
        env["OMOIDE_MODEL"] = options.model
    if options.context_size:
        env["OMOIDE_CONTEXT_SIZE"] = str(options.context_size)
    command = [sys.executable, "-m", "omoide", "memory", "check", *rest]
    load = os.getloadavg()[0]
    started = time.perf_counter()
    if options.json_out:
        with options.json_out.open("w", encoding="utf-8") as out:
            done = subprocess.run([*command, "--json"], env=env, stdout=out, check=False)
        if done.returncode == 0:
            subprocess.run([sys.executable, "-c", _SHOW, str(options.json_out)], check=False)
    else:
        done = subprocess.run(command, env=env, check=False)
    seconds = time.perf_counter() - started
    print(f"memory check: {seconds:.1f} s wall, load average {load:.2f} before, {os.getloadavg()[0]:.2f} after, "
          f"{os.cpu_count()} CPU(s)", file=sys.stderr)
    return done.returncode


_SHOW = """
import json, sys
data = json.load(open(sys.argv[1], encoding="utf-8"))
for arm in data["arms"]:
    kept = arm["figures"]["kept"]
    print(arm["arm"], arm["scenario"], arm["oracle"] or "model", "kept", {k: None if v is None else round(100 * v) for k, v in kept.items()})
"""

if __name__ == "__main__":
    raise SystemExit(main())
