"""The CLI agrees with itself (issue 23, observations 8 and 9), as a user runs
it: one rule for "nothing yet" (exit 0, the character named, what to do),
rolling lists and long texts in `omoide log` readable, `templates edit` saying
Saved only when something was saved, and a search hit on another branch
naming the branch that holds it."""

from __future__ import annotations

import asyncio
import re
import stat
import sys
from pathlib import Path

import pytest

from omoide.characters.library import find_character
from omoide.config.settings import Settings
from omoide.domain.chat import Role
from omoide.store import Store
from tests.cli.test_world_cli import run, tell_suzune_about_wren
from tests.world_script import WorldScript

LONG_FACT = ("Wren keeps the lighthouse lamp burning all night because, thirty years ago, a fishing boat named the Maren "
             "went down off Skerry Point on the one night the lamp failed, and she has never forgiven herself for it, "
             "though nobody in the village has ever blamed her.")


@pytest.mark.parametrize(("args", "name", "todo"), [
    (["summary", "suzune"], "Suzune", "omoide chat suzune"),
    (["diary", "wren"], "Wren", "omoide chat wren"),
    (["memos", "suzune"], "Suzune", "omoide chat suzune"),
    (["end", "wren"], "Wren", "omoide chat wren"),
    (["branches", "wren"], "Wren", "omoide chat wren"),
    (["export", "wren"], "Wren", "omoide chat wren"),
    (["log", "wren"], "Wren", "omoide end wren"),
])
def test_nothing_yet_is_one_rule_exit_0_naming_the_character_and_what_to_do(args: list[str], name: str, todo: str) -> None:
    result = run(*args)
    assert result.exit_code == 0, result.output
    said = " ".join(result.stderr.split())
    assert name in said and todo in said, said
    assert result.stdout == ""  # nothing that could pass for output (an export, a JSON)


def test_ending_a_conversation_where_nothing_was_said_is_nothing_yet_too() -> None:
    async def greet_only() -> None:
        from omoide.chat.session import ChatSession
        from tests.scripted import ScriptedBackend

        async with await Store.open() as store:
            session = await ChatSession.open(store, find_character("wren"), Settings(), ScriptedBackend())
            await session.aclose()

    asyncio.run(greet_only())
    result = run("end", "wren")
    assert result.exit_code == 0, result.output
    assert "Nothing was said to Wren" in result.stderr and "omoide chat wren" in " ".join(result.stderr.split())


def test_the_log_shows_rolling_lists_as_items_and_wraps_long_text() -> None:
    asyncio.run(tell_suzune_about_wren(WorldScript(offscreen=LONG_FACT)))
    result = run("log", "suzune")  # not --full: long texts are wrapped, not cut at a fixed width
    assert result.exit_code == 0, result.output
    assert '"c":' not in result.stdout and '"text":' not in result.stdout  # no raw JSON
    lines = result.stdout.splitlines()
    assert all(len(line) <= 80 for line in lines)  # wrapped to the terminal
    text = " ".join(result.stdout.split())
    # The rolling list's item, whole, tagged with its conversation and dated when it was heard.
    assert re.search(rf"- #1 \[\d\d/\d\d \d\d:\d\d\] {re.escape(LONG_FACT)}", text), text


@pytest.fixture
def editor(tmp_path: Path) -> Path:
    """An $EDITOR that writes $NEW_TEXT (when set) and exits with $EDITOR_STATUS."""
    script = tmp_path / "fake-editor"
    script.write_text(f"#!{sys.executable}\nimport os, sys\n"
                      "if 'NEW_TEXT' in os.environ:\n    open(sys.argv[1], 'w').write(os.environ['NEW_TEXT'])\n"
                      "sys.exit(int(os.environ.get('EDITOR_STATUS', '0')))\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return script


def test_templates_edit_says_saved_only_when_the_editor_succeeded_and_the_text_changed(
    editor: Path, omoide_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EDITOR", str(editor))
    copy = omoide_home / "config" / "templates" / "world.goal.txt"
    monkeypatch.setenv("EDITOR_STATUS", "1")  # the editor failed, touching nothing
    result = run("templates", "edit", "world.goal")
    assert result.exit_code == 1 and "Saved" not in result.stdout and "exited with status 1" in result.stderr
    assert not copy.exists()  # no unchanged copy left behind...
    assert "world.goal default " in " ".join(run("templates", "list").stdout.split())  # ...marked override
    monkeypatch.setenv("EDITOR_STATUS", "0")  # closed without a change
    result = run("templates", "edit", "world.goal")
    assert result.exit_code == 0 and "Saved" not in result.stdout and "No change" in result.stdout
    assert not copy.exists()
    monkeypatch.setenv("NEW_TEXT", "Goal of {char} toward {other}: {summary}\n")
    result = run("templates", "edit", "world.goal")
    assert result.exit_code == 0 and "Saved" in result.stdout
    assert "world.goal override" in " ".join(run("templates", "list").stdout.split())


def test_a_template_copy_ends_with_a_newline_and_renders_as_the_default(editor: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from omoide.memory import templates
    from omoide.world import steps  # noqa: F401  (registers the world templates)

    captured = []
    monkeypatch.setenv("EDITOR", f"{sys.executable} -c \"import sys; print(open(sys.argv[1]).read(), end='')\"")
    for name in sorted(templates.REGISTRY):
        spec = templates.spec_for(name)
        path = templates.override_path(name)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(templates.as_file(spec.default))
        captured.append(path.read_text())
        assert templates.get(name).text == spec.default  # the file's last newline is not part of the template
    assert captured and all(text.endswith("\n") for text in captured)


async def test_a_search_hit_on_another_branch_names_the_branch() -> None:
    store = await Store.open()  # the database the CLI reads
    chat = await store.chats.create("suzune", greeting="Welcome in.")
    aside = await store.messages.add(chat.id, chat.head_id, Role.USER, "Tell me about the lighthouse on the cliff.")
    await store.branches.save(chat.id, "cliff", aside.id)
    await store.chats.set_head(chat.id, chat.head_id)  # back to the greeting; the story goes on elsewhere
    await store.messages.add(chat.id, chat.head_id, Role.USER, "A matcha, please, and the lighthouse can wait.")
    await store.close()
    result = await asyncio.to_thread(run, "search", "suzune", "lighthouse")
    assert result.exit_code == 0, result.output
    rows = [" ".join(line.split()) for line in result.stdout.splitlines()]
    at = next(i for i, row in enumerate(rows) if "#2" in row)
    assert "branch" in rows[at + 1] and "cliff" in " ".join(rows[at + 1 : at + 3]), result.stdout  # under its number
    assert not any("#3" in row and "branch" in row for row in rows), result.stdout  # on the current path: nothing to add


def test_diary_entries_are_headed_as_diary_entries() -> None:
    async def write() -> None:
        from omoide.chat.session import ChatSession
        from tests.scripted import ScriptedBackend

        async with await Store.open() as store:
            session = await ChatSession.open(store, find_character("suzune"), Settings(), ScriptedBackend())
            await session.user.remember("He takes his matcha without sugar.")
            await session.aclose()

    asyncio.run(write())
    result = run("diary", "suzune")
    assert result.exit_code == 0, result.output
    assert "diary entry (written by you)" in result.stdout and "memo entry" not in result.stdout
