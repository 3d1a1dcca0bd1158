"""The static vectors the embedded setup ships (WordLlama): offline, quiet, and meaningful."""

from __future__ import annotations

import logging
import subprocess
import sys

from omoide.llm import static_embeddings


def test_loading_them_leaves_the_processs_logging_as_it_was() -> None:
    """WordLlama's import calls logging.basicConfig(level=INFO): every HTTP request would print."""
    code = ("import logging; from omoide.llm import static_embeddings as s; assert s.vectors(['a cat']) is not None; "
            "root = logging.getLogger(); print(len(root.handlers), root.level)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout.split() == ["0", str(logging.WARNING)], done.stderr


def test_a_bike_is_nearest_to_the_bicycle_with_no_word_in_common() -> None:
    lines = ["The tea was too strong again.", "We finally named our bicycle Rocket.", "Rain all afternoon, so I read."]
    found = static_embeddings.vectors(["What did I call my bike?", *lines])
    assert found is not None and found.shape == (4, 256)
    closeness = found[1:] @ found[0]
    assert lines[int(closeness.argmax())] == "We finally named our bicycle Rocket."
