"""`omoide memos`, and memos in `omoide search` and `omoide export`, through typer's runner."""

from __future__ import annotations

import asyncio
import json

import pytest
from typer.testing import CliRunner

from omoide.cli.app import app

runner = CliRunner()
GOOD = "【Highlight 1】: Kai found a brass compass in the \x1b[31mharbour\x1b[0m mud.\n【Highlight 2】: Wren promised to chart the fog isle with him."


def run(*args: str):  # type: ignore[no-untyped-def]
    return runner.invoke(app, list(args), catch_exceptions=False)


async def _chat_with_a_memo_and_a_gap() -> tuple[int, int]:
    from omoide.characters.library import find_character
    from omoide.config.settings import Settings
    from omoide.chat.session import ChatSession
    from omoide.store import Store
    from tests.scripted import ScriptedBackend

    store = await Store.open()
    summarizer = ScriptedBackend([[GOOD], ["*grins* Ahoy there, sailor!"]])
    session = await ChatSession.open(
        store, find_character("wren"), Settings(memory_style="memos", user_name="Kai"),
        ScriptedBackend(default=lambda m: ["Aye."]), summarizer=summarizer,
    )
    for i in range(8):
        async for _ in session.send(f"Day {i} at sea"):
            pass
        await session.wait_for_memory_work()
    pages = await session.book.pages()
    await store.close()
    assert [p.gap for p in pages] == [False, True]
    return session.chat.id, pages[1].id


def test_the_book_prints_as_markdown_and_json_with_its_gap() -> None:
    chat_id, _ = asyncio.run(_chat_with_a_memo_and_a_gap())
    result = run("memos", "wren")
    assert result.exit_code == 0, result.stderr
    out = result.stdout
    assert out.startswith("# Memo book: Wren")
    assert "· made\n\n- Kai found a brass compass in the \u241b[31mharbour\u241b[0m mud." in out
    assert "\x1b" not in out, "escape sequences from model text never reach the terminal"
    assert "gap" in out and "no memo for messages #" in out and "roleplay" in out
    data = json.loads(run("memos", "wren", "--json", "--chat", str(chat_id)).stdout)
    assert data["chat_id"] == chat_id
    assert [(m["status"], len(m["highlights"])) for m in data["memos"]] == [("ok", 2), ("failed", 0)]
    assert data["memos"][0]["last_id"] > data["memos"][0]["first_id"]


def test_add_writes_a_memo_at_the_head_and_retry_reports_a_gap_still_failing(monkeypatch: pytest.MonkeyPatch) -> None:
    chat_id, gap_id = asyncio.run(_chat_with_a_memo_and_a_gap())
    added = run("memos", "wren", "--add", "Kai and Wren once sailed to the lantern reef.")
    assert added.exit_code == 0 and "Wrote a memo at message #" in added.stderr
    assert "· written by you\n\n- Kai and Wren once sailed to the lantern reef." in added.stdout
    monkeypatch.setenv("OMOIDE_SUMMARY_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("OMOIDE_SUMMARY_MODEL", "cheap")
    monkeypatch.setenv("OMOIDE_MAX_RETRIES", "0")
    retried = run("memos", "wren", "--retry", "--json")
    assert retried.exit_code == 0
    assert "Still no memo for messages #" in retried.stderr
    memos = json.loads(retried.stdout)["memos"]
    gap = next(m for m in memos if m["id"] == gap_id)
    assert gap["status"] == "failed" and gap["reason"] and "roleplay" not in gap["reason"], "the new failure's reason"


def test_search_and_exports_include_memos() -> None:
    asyncio.run(_chat_with_a_memo_and_a_gap())
    found = run("search", "wren", "compass")
    assert found.exit_code == 0 and "memo #" in found.stdout and "memo book" in found.stdout
    markdown = run("export", "wren", "--format", "md").stdout
    assert "# Memo book" in markdown and "Wren promised to chart the fog isle with him." in markdown
    tree = json.loads(run("export", "wren", "--format", "tree").stdout)
    assert [m["status"] for m in tree["memos"]] == ["ok", "failed"]


def test_memos_without_a_chat_says_how_to_start_one() -> None:
    result = run("memos", "wren")  # nothing yet: not a failure (docs/cli.md)
    assert result.exit_code == 0 and "no chat with Wren yet" in result.stderr and "omoide chat wren" in result.stderr
