"""Embeddings with no server and no download: WordLlama's 256-dimension static
word vectors, which its wheel ships (16 MB, MIT), averaged per text on the
CPU in milliseconds. Installed with the embedded engine (`[local]`); without
the package, `available()` is False and recall goes by words alone.

The model loads once a process, in a thread, on first use (about a second):
never at start-up, never on the event loop."""

from __future__ import annotations

import asyncio
import importlib.util
import logging
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Matrix = npt.NDArray[np.float32]

log = logging.getLogger(__name__)

TEXT_CHARS = 2000
"""What of a text is embedded: a word average over a longer text says no more, and a huge message costs no more."""

_model: Any = None
_failed = False
_lock = threading.Lock()


def available() -> bool:
    """Whether the package is installed (and has not failed to load this process)."""
    return not _failed and importlib.util.find_spec("wordllama") is not None


def _quietly_import_wordllama() -> Any:
    """The package, imported without what its import does to logging: it calls
    `logging.basicConfig(level=INFO)`, which would print every HTTP request of
    the process to the terminal."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        import wordllama  # type: ignore[import-untyped,import-not-found,unused-ignore]
    finally:
        for handler in [h for h in root.handlers if h not in handlers]:
            root.removeHandler(handler)
        root.setLevel(level)
    return wordllama


def _load() -> Any:
    global _model, _failed
    with _lock:
        if _model is None and not _failed:
            try:
                wordllama = _quietly_import_wordllama()
                # Its wheel keeps the tokenizer in `tokenizers/`, where `load` looks only in a cache
                # directory: point the cache at the package, and never download.
                _model = wordllama.WordLlama.load(cache_dir=Path(wordllama.__file__).parent, disable_download=True)
            except Exception:  # noqa: BLE001 - a broken install means words alone, logged once
                log.exception("static embeddings could not load; recall goes by words alone")
                _failed = True
        return _model


def vectors(texts: Sequence[str]) -> Matrix | None:
    """One unit vector (float32, 256 wide) per text, in order; None without the
    model. Blocking: call it from a thread."""
    model = _load()
    if model is None:
        return None
    if not texts:
        import numpy as np

        return np.zeros((0, 256), dtype=np.float32)
    found: Matrix = model.embed([" ".join(t[:TEXT_CHARS].split()) or "." for t in texts], norm=True)
    return found.astype("float32", copy=False)


async def embed(texts: Sequence[str]) -> list[list[float]] | None:
    """`vectors` as the `Embed` the passages use, off the event loop."""
    found = await asyncio.to_thread(vectors, list(texts))
    return None if found is None else [list(map(float, row)) for row in found]
