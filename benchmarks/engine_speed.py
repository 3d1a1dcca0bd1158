"""Tokens per second of the embedded engine, before (llama-cpp-python) and after
(llama.cpp's server in process, xllamacpp), side by side in one run.

    python benchmarks/engine_speed.py --before /path/to/venv-with-llama-cpp-python/bin/python [--rounds 3]
    python benchmarks/engine_speed.py --threads 1 2 --batch-threads 2     # the engine alone, a thread sweep

The same SmolLM2-135M file, the same prompt as token ids (a 540-token chat
prompt), greedy decoding with no penalties, 64 generated tokens. Each engine
is set up as omoide sets it up: before, llama-cpp-python with every core for
both prompt and generation and its default batch (512); after, the engine's
defaults (1 generating thread, every core for the prompt, batch 128), unless
--threads/--batch-threads say otherwise. The two alternate, round after
round, so a change in the machine's load hits both. Per round: prompt
tokens/s (prompt tokens / time to the first token) and generation tokens/s
(tokens after the first / the time they took), the load average, and
whether the two produced the same tokens.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "src"))

GENERATE = 64
PROMPT = (
    "<|im_start|>system\nYou are Suzune, who keeps a small café by the harbour. "
    + "The evening rain taps on the window while the last customers talk about the tide and the lanterns. " * 22
    + "<|im_end|>\n<|im_start|>user\nWhat do you think of the rain tonight?<|im_end|>\n<|im_start|>assistant\n"
)

BEFORE = r"""
import json, os, sys, time
import llama_cpp, llama_cpp.llama
model, prompt, generate, plain = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4] == "plain"
cores = os.cpu_count() or 2
if plain:
    defaults = llama_cpp.llama_model_default_params
    def without_extra_buffers():
        params = defaults(); params.use_extra_bufts = False; return params
    llama_cpp.llama.llama_cpp.llama_model_default_params = without_extra_buffers
llama = llama_cpp.Llama(model_path=model, n_ctx=2048, n_threads=cores, verbose=False)
tokens = llama.tokenize(prompt.encode(), add_bos=False, special=True)
start = time.perf_counter(); first = None; out = []
for chunk in llama.create_completion(prompt=tokens, max_tokens=generate, temperature=0.0, repeat_penalty=1.0, stream=True):
    now = time.perf_counter()
    if first is None: first = now
    out.append(chunk["choices"][0]["text"])
end = time.perf_counter()
print(json.dumps({"prompt_tokens": len(tokens), "first": first - start, "rest": end - first, "pieces": len(out), "text": "".join(out)}))
"""


def after(model: Path, threads: int | None, batch_threads: int | None) -> dict[str, object]:
    from omoide.llm.engine import EngineShape, shared

    cores = os.cpu_count() or 2
    engine = shared(EngineShape(model, 2048, 1, threads or 1, batch_threads or cores))
    tokens = engine.tokenize(PROMPT)
    out: list[str] = []
    marks: list[float] = []

    def chunk(c: dict[str, object]) -> bool:
        choices = c.get("choices") or []
        text = choices[0].get("text") if choices else None  # type: ignore[union-attr]
        if text:
            marks.append(time.perf_counter())
            out.append(str(text))
        return False

    start = time.perf_counter()
    engine.complete({"prompt": tokens, "max_tokens": GENERATE, "temperature": 0.0, "repeat_penalty": 1.0,
                     "id_slot": 0, "cache_prompt": False}, chunk)
    return {"prompt_tokens": len(tokens), "first": marks[0] - start, "rest": marks[-1] - marks[0], "pieces": len(out), "text": "".join(out)}


def before(python: str, model: Path, plain: bool) -> dict[str, object]:
    argv = [python, "-c", BEFORE, str(model), PROMPT, str(GENERATE), "plain" if plain else "extra"]
    done = subprocess.run(argv, capture_output=True, text=True, check=True)
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def rates(run: dict[str, object]) -> tuple[float, float]:
    prompt = int(run["prompt_tokens"]) / float(run["first"])  # type: ignore[call-overload]
    generation = (int(run["pieces"]) - 1) / float(run["rest"]) if float(run["rest"]) > 0 else 0.0  # type: ignore[call-overload]
    return prompt, generation


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--before", help="a Python with llama-cpp-python installed (omit: the engine alone)")
    parser.add_argument("--before-plain-buffers", action="store_true",
                        help="load llama-cpp-python without its extra buffer types (AMX, repack): its native build "
                             "on this machine segfaults in its first batch with them (docs/engine.md)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, nargs="+", default=[0], help="generating threads to try (0: the default)")
    parser.add_argument("--batch-threads", type=int, default=0)
    args = parser.parse_args()
    from omoide.models.catalog import SMOLLM2

    model = SMOLLM2.locate()
    results: dict[str, list[tuple[float, float]]] = {}
    texts: dict[str, str] = {}
    for round_ in range(1, args.rounds + 1):
        if args.before:
            run = before(args.before, model, args.before_plain_buffers)
            results.setdefault("before: llama-cpp-python", []).append(rates(run))
            texts["before"] = str(run["text"])
            print(f"round {round_} before: prompt {rates(run)[0]:6.1f} tok/s, generation {rates(run)[1]:5.1f} tok/s, "
                  f"load {os.getloadavg()[0]:.1f}", flush=True)
        for threads in args.threads:
            run = after(model, threads or None, args.batch_threads or None)
            label = f"after: engine, {threads or 1} generating thread(s)"
            results.setdefault(label, []).append(rates(run))
            texts["after"] = str(run["text"])
            print(f"round {round_} {label}: prompt {rates(run)[0]:6.1f} tok/s, generation {rates(run)[1]:5.1f} tok/s, "
                  f"load {os.getloadavg()[0]:.1f}", flush=True)
    print(f"\nmedians over {args.rounds} rounds (SmolLM2-135M, {GENERATE} tokens, greedy):")
    for label, values in results.items():
        print(f"  {label:<40} prompt {statistics.median(v[0] for v in values):6.1f} tok/s   "
              f"generation {statistics.median(v[1] for v in values):5.1f} tok/s")
    if "before" in texts:
        print(f"  the same tokens before and after: {texts['before'] == texts['after']}")


if __name__ == "__main__":
    main()
