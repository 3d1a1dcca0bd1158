"""Cold start of `omoide chat` to its first paint, and the embedded model's speed.

    python benchmarks/startup.py

Cold start: a fresh Python process imports omoide, opens the store, builds the
session and the Textual app (headless, `run_test`), and reports when the first
screen has been painted; the parent measures wall time from spawn to that
report (interpreter start included). The embedded model loads lazily, on the
first message, so it is measured separately: load time, prompt processing and
generation speed on this machine's CPU.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

OPEN_CHAT = str(Path(__file__).with_name("open_chat.py"))


def cold_start(runs: int = 5) -> tuple[float, float]:
    walls, inner = [], []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as home:
            env = {**os.environ, "OMOIDE_HOME": home}
            start = time.perf_counter()
            proc = subprocess.Popen([sys.executable, OPEN_CHAT], stdout=subprocess.PIPE, text=True, env=env)
            assert proc.stdout is not None
            for line in proc.stdout:
                if line.startswith("opened"):
                    walls.append(time.perf_counter() - start)
                    inner.append(float(line.split()[1]))
                    break
            proc.wait()
    return statistics.median(walls), statistics.median(inner)


def model_speed() -> tuple[float, float, float, int]:
    """Engine start, then prompt and generation speed from the engine's own timings."""
    from omoide.config.settings import Settings
    from omoide.llm.local import LocalBackend

    backend = LocalBackend(Settings(max_tokens=128, temperature=0.7, context_size=2048))
    t0 = time.perf_counter()
    engine = backend.engine()
    load = time.perf_counter() - t0
    tokens = engine.tokenize("The lighthouse keeper said: " + "the sea was calm and grey that morning. " * 40)
    timings: dict[str, float] = {}

    def chunk(c: dict[str, object]) -> bool:
        if isinstance(c.get("timings"), dict):
            timings.update(c["timings"])  # type: ignore[arg-type]
        return False

    engine.complete({"prompt": tokens, "max_tokens": 128, "temperature": 0.7, "id_slot": 0, "cache_prompt": False,
                     "ignore_eos": True}, chunk)
    return load, float(timings["prompt_per_second"]), float(timings["predicted_per_second"]), os.cpu_count() or 0


def main() -> None:
    wall, inner = cold_start()
    print(f"omoide chat cold start to first paint: {wall * 1000:.0f} ms wall (process spawn to painted), "
          f"{inner * 1000:.0f} ms inside the process (median of 5, headless)")
    load, prompt_tps, gen_tps, cores = model_speed()
    print(f"embedded SmolLM2-135M-Instruct Q4_1 on {cores} cores: load {load * 1000:.0f} ms, "
          f"prompt {prompt_tps:.0f} tok/s, generation {gen_tps:.0f} tok/s")


if __name__ == "__main__":
    main()
