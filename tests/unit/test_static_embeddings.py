"""The static vectors the embedded setup ships (WordLlama): offline, quiet, and meaningful."""

from __future__ import annotations

import logging
import subprocess
import sys
from types import SimpleNamespace

from omoide.llm import static_embeddings
from omoide.memory.meaning import CATCH_UP_BATCH, MeaningIndex


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


class Kept:
    """The vectors MeaningIndex keeps, in memory (the database's are tested in test_passages_meaning)."""

    def __init__(self) -> None:
        self.rows: dict[int, bytes] = {}

    async def after(self, chat_id: int, model: str, after: int, before: int, *, limit: int) -> list[tuple[int, bytes]]:
        return [(i, v) for i, v in sorted(self.rows.items()) if after < i < before][:limit]

    async def keep(self, chat_id: int, model: str, rows: list[tuple[int, bytes]]) -> None:
        self.rows.update(rows)


class Said:
    """The one store read MeaningIndex makes, over a list of (id, text)."""

    def __init__(self, said: list[tuple[int, str]]) -> None:
        self.said = said

    async def said_between(self, chat_id: int, after: int, before: int, *, limit: int) -> list[tuple[int, str]]:
        return [(i, t) for i, t in self.said if after < i < before][:limit]


async def test_the_index_grows_past_its_room_and_still_finds_by_meaning_only_before_the_window() -> None:
    said = [(i, f"The tea was too strong again, cup {i}.") for i in range(1, CATCH_UP_BATCH + 10)]
    said.insert(5, (10_000, "We finally named our bicycle Rocket."))  # another branch, newer than the window below
    said.append((CATCH_UP_BATCH + 20, "My bicycle is called Comet now."))
    index = MeaningIndex(SimpleNamespace(recall=Said(sorted(said)), vectors=Kept()), 1)  # type: ignore[arg-type]
    await index.nearest("What did I call my bike?", before=CATCH_UP_BATCH + 15, limit=1)  # the rest in the background
    await index.settled()
    first = await index.nearest("What did I call my bike?", before=CATCH_UP_BATCH + 15, limit=1)
    assert first == [], "the bicycle line of another branch is newer than the window: not a memory here"
    later = await index.nearest("What did I call my bike?", before=CATCH_UP_BATCH + 30, limit=1)
    assert [i for i, _ in later] == [CATCH_UP_BATCH + 20]
