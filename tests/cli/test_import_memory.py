"""An imported chat is remembered: memory catches up with lines stored with no
reply between them (SillyTavern's 1,200 messages here), part by part at the
cadence a chat that replies would have, and a fact of its first messages comes
back when the user asks about it. Through `omoide import-chat` and `omoide say`
against a local OpenAI-compatible server that records every request."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from omoide.cli.app import app
from omoide.config.sections import MemorySettings
from omoide.locations import database_file
from tests.fakeservers import address, chat_reply, http_server

FACT = "My grandmother keeps the lighthouse at Porthkennack, the one with the green door."
MESSAGES = 1200


def sillytavern_chat() -> str:
    lines: list[dict[str, object]] = [{"user_name": "Kai", "character_name": "Suzune"}]
    for n in range(MESSAGES):
        user = n % 2 == 0
        text = FACT if n == 4 else (f"Evening {n}: the kettle, the rain, the usual." if user else f"Mm. Tea number {n}.")
        lines.append({"name": "Kai" if user else "Suzune", "is_user": user, "mes": text,
                      "send_date": f"April {1 + n // 100}, 2026 8:{n % 60:02d}pm"})
    return "\n".join(json.dumps(line) for line in lines)


def test_an_imported_chat_is_compressed_in_parts_and_its_first_facts_come_back(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "chat.jsonl"
    path.write_text(sillytavern_chat())
    runner = CliRunner()
    imported = runner.invoke(app, ["import-chat", str(path), "--character", "suzune"], catch_exceptions=False)
    assert imported.exit_code == 0, imported.output
    with http_server({"POST /v1/chat/completions": chat_reply("Mm.")}) as server:
        monkeypatch.setenv("OMOIDE_BASE_URL", address(server) + "/v1")
        monkeypatch.setenv("OMOIDE_MEMORY_WRITER", "extract")
        said = runner.invoke(app, ["say", "suzune", "Good evening."], catch_exceptions=False)
        assert said.exit_code == 0, said.output
        with sqlite3.connect(database_file()) as db:
            depth = dict(db.execute("SELECT id, depth FROM messages").fetchall())
            covered = [depth[row[0]] for row in db.execute("SELECT covers_to_id FROM summaries ORDER BY id")]
        settings = MemorySettings()
        part = settings.summary_threshold + 1 - settings.recent_messages
        assert len(covered) >= (MESSAGES - settings.recent_messages) // settings.summary_threshold
        assert max(b - a for a, b in zip([0, *covered], covered, strict=False)) <= max(part, 6), "parts of a reply's size"

        asked = runner.invoke(app, ["say", "suzune", "Which lighthouse does my grandmother keep?"], catch_exceptions=False)
        assert asked.exit_code == 0, asked.output
        chats = [json.loads(r["body"]) for r in server.requests if r.get("method") == "POST"]
        prompt = "\n".join(str(m.get("content", "")) for m in chats[-1]["messages"])
        assert "Porthkennack" in prompt
