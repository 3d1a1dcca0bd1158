"""The `omoide` command through typer's runner, on a temp OMOIDE_HOME."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from omoide.cli.app import app

runner = CliRunner()


def run(*args: str, **kw):  # type: ignore[no-untyped-def]
    return runner.invoke(app, list(args), catch_exceptions=False, **kw)


@pytest.mark.model
def test_say_streams_a_reply_on_the_embedded_model_and_chat_history_keeps_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OMOIDE_MAX_TOKENS", "24")
    result = run("say", "wren", "Any new islands on the map today?")
    assert result.exit_code == 0, result.output
    assert result.stdout.strip()
    chats = run("chats", "wren")
    assert "Chat with Wren" in chats.stdout and " 3 " in chats.stdout
    exported = run("export", "wren", "--format", "md")
    assert "Any new islands on the map today?" in exported.stdout
    assert result.stdout.strip()[:20] in exported.stdout


def test_a_wrong_base_url_gives_a_clear_error_not_a_traceback(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OMOIDE_BASE_URL", "http://127.0.0.1:9/v1")
    result = run("say", "suzune", "hello")
    assert result.exit_code == 1
    assert "Cannot reach the server at http://127.0.0.1:9/v1" in result.stderr
    assert "Traceback" not in result.output + result.stderr
    history = run("export", "suzune", "--format", "md")
    assert "hello" in history.stdout  # the message is kept


def test_doctor_names_what_is_wrong(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OMOIDE_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("OMOIDE_API_KEY", "sk-do-not-print-me")
    result = run("doctor")
    assert result.exit_code == 1
    assert "✗ backend: Cannot reach the server" in result.stdout
    assert "api key: set (from OMOIDE_API_KEY)" in result.stdout
    assert "sk-do-not-print-me" not in result.stdout


def test_doctor_passes_a_flat_config_it_still_reads_and_fails_a_key_it_ignores(omoide_home: Path) -> None:
    """A config.toml from before the sections works: doctor names each key's new
    place once (the warning) and finds nothing to fix; an unknown key is ignored,
    so that is something to fix."""
    config = omoide_home / "config" / "config.toml"
    config.parent.mkdir(parents=True, mode=0o700)
    config.write_text('user_name = "Kai"\ndiscover_servers = []\n')
    config.chmod(0o600)
    result = run("doctor")
    assert "its place is now [user] name" in result.stderr
    assert "✗" not in result.stdout and result.exit_code == 0
    config.write_text('user_name = "Kai"\ndiscover_servers = []\ntemprature = 0.5\n')
    result = run("doctor")
    assert "✗ config: Unknown setting 'temprature'" in result.stdout and result.exit_code == 1


def test_a_broken_config_file_is_named(omoide_home: Path) -> None:
    config = omoide_home / "config" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text("context_size = 'lots'\n")
    result = run("chats")
    assert result.exit_code == 1
    assert "context_size" in result.stderr and str(config) in result.stderr


def test_an_unknown_character_suggests_the_nearest() -> None:
    result = run("say", "suzne", "hi")
    assert result.exit_code == 1
    assert "There is no character called 'suzne'" in result.stderr and "Did you mean 'suzune'" in result.stderr


def test_characters_list_shows_the_shipped_characters() -> None:
    result = run("characters", "list")
    assert result.exit_code == 0 and "suzune" in result.stdout and "wren" in result.stdout


def test_import_chat_then_search_diary_summary_and_export(tmp_path: Path) -> None:
    lines = [
        {"user_name": "Kai", "character_name": "Suzune"},
        {"name": "Suzune", "is_user": False, "mes": "Welcome to Tsuki no Shizuku.", "send_date": "April 1, 2026 8:15pm"},
        {"name": "Kai", "is_user": True, "mes": "One matcha latte, please.", "send_date": "April 1, 2026 8:16pm"},
        {"name": "Suzune", "is_user": False, "mes": "Fine.", "swipes": ["Fine.", "Out of matcha."], "swipe_id": 0,
         "send_date": "April 1, 2026 8:16pm"},
    ]
    path = tmp_path / "chat.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines))
    imported = run("import-chat", str(path), "--character", "suzune")
    assert imported.exit_code == 0 and "Imported 4 messages" in imported.stdout
    found = run("search", "suzune", "matcha")
    assert "One matcha latte, please." in found.stdout and "Welcome" not in found.stdout
    assert "has not written anything yet" in run("diary", "suzune").stdout
    assert "No summary yet" in run("summary", "suzune").stdout
    exported = run("export", "suzune", "--format", "jsonl")
    records = [json.loads(x) for x in exported.stdout.splitlines()]
    assert records[-1]["swipes"] == ["Fine.", "Out of matcha."]


def test_import_chat_refuses_a_broken_file_and_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"user_name": "Kai"}\n{oops\n')
    result = run("import-chat", str(path), "--character", "suzune")
    assert result.exit_code == 1 and "line 2: invalid JSON" in result.stderr
    assert "No chats yet" in run("chats").stdout


async def _chat_with_branches() -> None:
    from omoide.characters.library import find_character
    from omoide.config.settings import Settings
    from omoide.chat.session import ChatSession
    from omoide.store import Store
    from tests.scripted import ScriptedBackend

    store = await Store.open()
    session = await ChatSession.open(store, find_character("wren"), Settings(), ScriptedBackend([["Aye, a new one."], ["Then call it Mochi Isle."]]))
    async for _ in session.send("Any islands today?"):
        pass
    await session.tree.save_branch("before_naming")
    async for _ in session.send("Let's name it after my cat."):
        pass
    await store.close()


def test_branches_lists_names_openings_and_distance_from_the_fork() -> None:
    import asyncio

    asyncio.run(_chat_with_branches())
    result = run("branches", "wren")
    assert result.exit_code == 0
    assert "before_naming" in result.stdout and "Aye, a new one." in result.stdout
    opened = run("chat", "wren", "--branch", "nope")
    assert opened.exit_code == 1 and "There is no branch named 'nope'" in opened.stderr and "before_naming" in opened.stderr


def test_characters_import_and_export_cards(tmp_path: Path) -> None:
    cards = Path(__file__).parents[1] / "data" / "cards"
    bad = tmp_path / "bad.json"
    bad.write_text("{nope")
    result = run("characters", "import", str(cards / "v2_orin.json"), str(bad))
    assert result.exit_code == 1
    assert "✓" in result.stdout and "orin" in result.stdout and "invalid JSON" in result.stderr
    assert "orin" in run("characters", "list").stdout
    target = tmp_path / "orin.json"
    exported = run("characters", "export", "orin", "--format", "json", "--output", str(target))
    assert exported.exit_code == 0
    assert json.loads(target.read_text()) == json.loads((cards / "v2_orin.json").read_text())
    png = tmp_path / "suzune.png"
    assert run("characters", "export", "suzune", "--output", str(png)).exit_code == 0
    assert png.read_bytes().startswith(b"\x89PNG")


def test_characters_lore_attaches_a_world_info_file(tmp_path: Path) -> None:
    world = Path(__file__).parents[1] / "data" / "cards" / "world_harbour.json"
    result = run("characters", "lore", str(world), "--character", "wren")
    assert result.exit_code == 0 and "Attached" in result.stdout and "Wren" in result.stdout
    bad = tmp_path / "bad.json"
    bad.write_text("[]")
    failed = run("characters", "lore", str(bad))
    assert failed.exit_code == 1 and "Cannot read the lorebook" in failed.stderr


def test_commands_that_never_talk_to_a_model_work_when_the_backend_cannot_be_built(omoide_home: Path, tmp_path: Path) -> None:
    config = omoide_home / "config" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('backend = "anthropic"\nmodel = "claude-test"\n')  # and no api key
    said = run("say", "suzune", "hello")
    assert said.exit_code == 1 and "needs an API key" in said.stderr

    lines = [
        {"user_name": "Kai", "character_name": "Suzune"},
        {"name": "Suzune", "is_user": False, "mes": "Welcome back.", "send_date": "April 1, 2026 8:15pm"},
        {"name": "Kai", "is_user": True, "mes": "Hojicha tonight, please.", "send_date": "April 1, 2026 8:16pm"},
    ]
    path = tmp_path / "chat.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines))
    results = {
        "import-chat": run("import-chat", str(path), "--character", "suzune"),
        "chats": run("chats"),
        "search": run("search", "suzune", "hojicha"),
        "diary": run("diary", "suzune"),
        "summary": run("summary", "suzune"),
        "branches": run("branches", "suzune"),
        "export": run("export", "suzune", "--format", "md"),
    }
    for name, result in results.items():
        assert result.exit_code == 0, f"{name}: {result.stderr}"
        assert "API key" not in result.stderr, name
    assert "Imported 2 messages" in results["import-chat"].stdout
    assert "Imported from chat.jsonl" in results["chats"].stdout
    assert "Hojicha tonight, please." in results["search"].stdout
    assert "No branches in chat" in results["branches"].stdout
    assert "Hojicha tonight, please." in results["export"].stdout


def test_omoide_chat_from_the_command_line_loads_no_other_command_group(tmp_path: Path) -> None:
    """`omoide chat` skips the other groups' imports; its own options still parse,
    and every other command still has its groups."""
    import os
    import subprocess
    import sys

    script = Path(sys.executable).with_name("omoide")
    env = {**os.environ, "OMOIDE_HOME": str(tmp_path)}
    probe = ("import sys; sys.argv = [sys.argv[1], *sys.argv[2:]]; import omoide.cli.app as c; "
             "print(sorted(m for m in sys.modules if m.startswith(('omoide.world', 'omoide.cli.world')) or m == 'omoide.cli.profile'))")
    only_chat = subprocess.run([sys.executable, "-c", probe, str(script), "chat", "--help"], env=env, capture_output=True, text=True, check=True)
    assert only_chat.stdout.strip() == "[]"
    other = subprocess.run([sys.executable, "-c", probe, str(script), "world", "--help"], env=env, capture_output=True, text=True, check=True)
    assert "omoide.cli.world" in other.stdout and "omoide.cli.profile" in other.stdout
    chat_help = subprocess.run([str(script), "chat", "--help"], env=env, capture_output=True, text=True, check=True)
    assert "--new" in chat_help.stdout and "--branch" in chat_help.stdout


def test_search_names_you_by_your_name_not_you(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 42: `omoide search` showed `you` in the who column for the user's messages."""
    monkeypatch.setenv("OMOIDE_USER_NAME", "Kai")
    lines = [
        {"user_name": "Kai", "character_name": "Suzune"},
        {"name": "Suzune", "is_user": False, "mes": "Welcome to Tsuki no Shizuku.", "send_date": "April 1, 2026 8:15pm"},
        {"name": "Kai", "is_user": True, "mes": "One matcha latte, please.", "send_date": "April 1, 2026 8:16pm"},
    ]
    path = tmp_path / "chat.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines))
    assert run("import-chat", str(path), "--character", "suzune").exit_code == 0
    found = run("search", "suzune", "matcha", env={"COLUMNS": "160"})
    row = next(line for line in found.stdout.splitlines() if "One matcha latte" in line)
    assert "│ Kai " in row and "│ you " not in row
