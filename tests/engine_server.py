"""The tests' real OpenAI-compatible server: llama.cpp's own server from the
same prebuilt engine as the embedded model (xllamacpp), on a TCP port of the
loopback, run as its own process by tests/conftest.py.

    python tests/engine_server.py MODEL.gguf PORT [CHAT_TEMPLATE_FILE]

Prints READY once the model is loaded, then serves until stdin closes.
"""

from __future__ import annotations

import sys
from pathlib import Path


def main() -> None:
    import xllamacpp

    model, port = Path(sys.argv[1]), int(sys.argv[2])
    params = xllamacpp.CommonParams()
    params.model.path = str(model)
    params.model_alias = {"smollm2"}
    params.hostnames = ["127.0.0.1"]
    params.port = port
    params.n_ctx = 2048 * 2
    params.n_parallel = 2
    params.cpuparams.n_threads = 1
    params.cpuparams_batch.n_threads = 2
    params.cache_ram_mib = 0
    params.cache_idle_slots = False
    params.warmup = False
    params.endpoint_props = True
    params.use_jinja = True
    if len(sys.argv) > 3:
        params.chat_template = Path(sys.argv[3]).read_text()
    server = xllamacpp.Server(params)
    print(f"READY {server.listening_address}", flush=True)
    sys.stdin.read()  # until the test session closes our stdin


if __name__ == "__main__":
    main()
