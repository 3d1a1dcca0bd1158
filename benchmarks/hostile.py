"""Figures for hostile input: the peak memory of importing a decompression-bomb
card, the time a backtracking lorebook key takes per scan, and the time memory
in the story's own words takes over a huge message built to make its
sentence splitting backtrack.

    python benchmarks/hostile.py
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import textwrap
import time
import zlib
from pathlib import Path

from omoide.characters import lorebook
from omoide.characters.model import LoreEntry, Lorebook
from omoide.characters.png import Chunk, blank_png, read_chunks, write_chunks
from omoide.memory.extract import fallback_summary

MEASURED = textwrap.dedent(
    """
    import runpy, sys
    sys.argv = ["omoide", *sys.argv[1:]]
    try:
        runpy.run_module("omoide.cli.app", run_name="__main__")
    finally:
        peak = next(line for line in open("/proc/self/status") if line.startswith("VmHWM:")).split()[1]
        print(f"peak_kib={peak}", file=sys.stderr)
    """
)


def bomb_card(chunks: int = 60, each: int = 6 * 1024 * 1024) -> bytes:
    """A small PNG whose zTXt chunks inflate to `chunks` x `each` bytes."""
    text = zlib.compress(b"A" * each, 9)
    image = read_chunks(blank_png())
    extra = [Chunk(b"zTXt", f"junk{i}".encode() + b"\x00\x00" + text) for i in range(chunks)]
    return write_chunks(image[:-1] + extra + image[-1:])


def import_peak_mib(card: Path) -> float:
    with tempfile.TemporaryDirectory() as home:
        result = subprocess.run([sys.executable, "-c", MEASURED, "characters", "import", str(card)],
                                capture_output=True, text=True, env={**os.environ, "OMOIDE_HOME": home})
    return int(result.stderr.rsplit("peak_kib=", 1)[1].split()[0]) / 1024


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        card = Path(tmp) / "bomb.png"
        data = bomb_card()
        card.write_bytes(data)
        if Path("/proc/self/status").exists():
            print(f"bomb card: {len(data) / 1024:.0f} KiB on disk, 360 MiB of text inside; "
                  f"`omoide characters import` peak RSS {import_peak_mib(card):.0f} MiB")
    book = Lorebook(entries=[LoreEntry(keys=["/(a+)+$/", "/^(\\w+\\s?)*$/"], content="never")])
    for length in (30, 60, 10_000):
        message = "a" * length + "!"
        start = time.perf_counter()
        lorebook.scan(book, [message])
        print(f"lore scan, key /(a+)+$/, message of {length + 1:,} characters: {(time.perf_counter() - start) * 1000:.2f} ms")
    # Whitespace runs and capitalised words before "said:": what the split between reported lines looks for.
    huge = "[03/02 19:03] Kai said: a" + " " * 200_000 + "b " + "Abc Def " * 50_000 + "said: c"
    start = time.perf_counter()
    fallback_summary([huge], user="Kai", character="Suzune", budget_chars=2800)
    print(f"own-words summary of a {len(huge):,}-character reported line: {(time.perf_counter() - start) * 1000:.0f} ms")


if __name__ == "__main__":
    main()
