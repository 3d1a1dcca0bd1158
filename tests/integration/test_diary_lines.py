"""One definition of a diary line, for the prompt limit and the compression
trigger alike: after any number of entries the prompt carries the compressed
diary and the newest entries, and never more diary lines than the limit."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from omoide.characters.model import Character
from omoide.config.settings import Settings
from omoide.chat.session import ChatSession
from omoide.store import Store
from tests.scripted import ScriptedBackend

MIKA = Character(id="mika", name="Mika", first_message="Hi, {{user}}!")
LIMIT = 8


def diary_block_lines(text: str, title: str) -> list[str]:
    """The diary lines (not headings, not blank) of one prompt block."""
    match = re.search(rf"## {title}\n(.*?)(?=\n## (?!\d\d/\d\d)|\Z)", text, re.DOTALL)
    if not match:
        return []
    return [line for line in match.group(1).splitlines() if line.strip() and not re.match(r"## \d\d/\d\d - ", line)]


def compressor(messages) -> list[str]:  # type: ignore[no-untyped-def]
    # Three lines in the character's voice: within half the limit, as asked.
    kept = re.findall(r"entry (\d+)", messages[-1]["content"])
    if not messages[-1]["content"].startswith("Diary:"):
        return ["Kai and Mika talked for a long while about small things, and she seemed glad he kept coming back."]
    return [f"I wrote a lot lately.\nThe newest thing I folded in was entry {kept[-1]}.\nI keep these close."]


@pytest.mark.parametrize("lines_per_entry", [1, 2, 3])
async def test_the_prompt_always_holds_the_compressed_diary_and_the_newest_entries(tmp_path: Path, lines_per_entry: int) -> None:
    store = await Store.open(tmp_path / "d.db")
    settings = Settings(user_name="Kai", diary_prompt_lines=LIMIT, diary_compress_lines=LIMIT, recent_messages=4, summary_threshold=50)
    summarizer = ScriptedBackend(default=compressor)
    session = await ChatSession.open(store, MIKA, settings, ScriptedBackend(default=lambda m: ["ok"]), summarizer=summarizer)
    compressed_seen = False
    for i in range(40):
        text = "\n".join(f"entry {i} line {j}" for j in range(lines_per_entry))
        await session.user.remember(text)
        async for _ in session.send(f"turn {i}"):
            pass
        prompt = session.last_prompt
        assert prompt is not None
        memory = next(m["content"] for m in prompt.messages if m["role"] == "system")
        tail = prompt.messages[-1]["content"]
        stable = diary_block_lines(memory, "Diary")
        since = diary_block_lines(tail, "Diary lines written since")
        assert len(stable) + len(since) <= LIMIT, f"turn {i}: {len(stable) + len(since)} diary lines"
        assert f"entry {i} line {lines_per_entry - 1}" in (since or stable)[-1], f"turn {i}: the newest entry is missing"
        if any("I wrote a lot lately." in line for line in stable):
            compressed_seen = True
        if compressed_seen:
            assert stable[0] == "I wrote a lot lately.", f"turn {i}: the compressed diary left the prompt"
        await session.wait_for_memory_work()
        assert len([1 for e in (await session.memory()).diary for line in e.content.splitlines() if line.strip()]) <= LIMIT
    await store.close()
    assert compressed_seen
    assert f"at most {LIMIT // 2} lines" in summarizer.calls[0]["messages"][0]["content"]
