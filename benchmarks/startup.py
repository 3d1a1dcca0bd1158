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
    from omoide.config.settings import Settings
    from omoide.llm.local import LocalBackend, _load

    settings = Settings(max_tokens=128, temperature=0.7, context_size=2048)
    backend = LocalBackend(settings)
    t0 = time.perf_counter()
    llama = _load(backend.path, backend.n_ctx, settings.embedded.threads).llama
    load = time.perf_counter() - t0
    prompt = "The lighthouse keeper said: " + "the sea was calm and grey that morning. " * 40
    tokens = llama.tokenize(prompt.encode())
    llama.reset()
    t0 = time.perf_counter()
    llama.eval(tokens)
    prompt_tps = len(tokens) / (time.perf_counter() - t0)
    generated = 0
    first = 0.0
    for _ in llama.generate(tokens, temp=0.7, reset=True):
        generated += 1
        if generated == 1:
            first = time.perf_counter()  # timing starts once the prompt is evaluated
        if generated == 129:
            break
    gen_tps = (generated - 1) / (time.perf_counter() - first)
    return load, prompt_tps, gen_tps, os.cpu_count() or 0


def main() -> None:
    wall, inner = cold_start()
    print(f"omoide chat cold start to first paint: {wall * 1000:.0f} ms wall (process spawn to painted), "
          f"{inner * 1000:.0f} ms inside the process (median of 5, headless)")
    load, prompt_tps, gen_tps, cores = model_speed()
    print(f"embedded SmolLM2-135M-Instruct Q4_1 on {cores} cores: load {load * 1000:.0f} ms, "
          f"prompt {prompt_tps:.0f} tok/s, generation {gen_tps:.0f} tok/s")


if __name__ == "__main__":
    main()
