"""The tests' real OpenAI-compatible server: llama.cpp's own server from the
same prebuilt engine as the embedded model (xllamacpp), on a TCP port of the
loopback, run as its own process by tests/conftest.py.

    python tests/engine_server.py MODEL.gguf PORT [CHAT_TEMPLATE_FILE] [--context N] [--slots N] [--threads N]

Prints READY once the model is loaded, then serves until stdin closes.
"""

from __future__ import annotations

import sys
from pathlib import Path


def main() -> None:
    import argparse

    import xllamacpp

    parser = argparse.ArgumentParser()
    parser.add_argument("model", type=Path)
    parser.add_argument("port", type=int)
    parser.add_argument("template", type=Path, nargs="?")
    parser.add_argument("--context", type=int, default=2048, help="tokens per slot")
    parser.add_argument("--slots", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--cache-reuse", type=int, default=0,
                        help="llama.cpp's --cache-reuse (0, its default: a stock server; the embedded engine uses 32)")
    args = parser.parse_args()
    model, port = args.model, args.port
    params = xllamacpp.CommonParams()
    params.model.path = str(model)
    params.model_alias = {"smollm2"}
    params.hostnames = ["127.0.0.1"]
    params.port = port
    params.n_ctx = args.context * args.slots
    params.n_parallel = args.slots
    params.cpuparams.n_threads = args.threads
    params.cpuparams_batch.n_threads = 2
    params.cache_ram_mib = 0
    params.n_cache_reuse = args.cache_reuse
    params.cache_idle_slots = False
    params.warmup = False
    params.endpoint_props = True
    params.use_jinja = True
    if args.template is not None:
        params.chat_template = args.template.read_text()
    server = xllamacpp.Server(params)
    print(f"READY {server.listening_address}", flush=True)
    sys.stdin.read()  # until the test session closes our stdin


if __name__ == "__main__":
    main()
