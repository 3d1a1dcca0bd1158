"""`omoide profile`: print, add, edit in $EDITOR (a real editor process), accept
and reject what characters learned; on a temp OMOIDE_HOME."""

from __future__ import annotations

import asyncio
import stat
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from omoide import locations
from omoide.cli.app import app
from omoide.domain.chat import FactStatus, Role
from omoide.store import Store

runner = CliRunner()


def run(*args: str):  # type: ignore[no-untyped-def]
    return runner.invoke(app, list(args), catch_exceptions=False)


def editor(tmp_path: Path, replace: str, by: str) -> str:
    """An $EDITOR that rewrites one string in the file it is given."""
    script = tmp_path / "edit.py"
    script.write_text(
        "import sys, pathlib\n"
        f"p = pathlib.Path(sys.argv[-1]); p.write_text(p.read_text().replace({replace!r}, {by!r}))\n"
    )
    wrapper = tmp_path / "editor.sh"
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{script}" "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IEXEC)
    return str(wrapper)


def test_add_and_edit_a_profile_in_the_editor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert run("profile", "add", "allergic to cats").exit_code == 0
    monkeypatch.setenv("EDITOR", editor(tmp_path, "name:", "name: Kai\n- works night shifts\n#"))
    result = run("profile", "edit")
    assert result.exit_code == 0, result.output
    shown = run("profile").stdout
    assert "name: Kai" in shown and "- allergic to cats" in shown and "- works night shifts" in shown


def test_a_bad_edit_is_refused_and_kept_in_a_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EDITOR", editor(tmp_path, "pronouns:", "favourite colour: red"))
    result = run("profile", "edit")
    assert result.exit_code == 1
    assert "Line 6 of the profile is not understood" in result.stderr
    kept = locations.data_dir() / "profile-unsaved.txt"
    assert "favourite colour: red" in kept.read_text()
    assert "favourite" not in run("profile").stdout


def test_proposals_are_listed_with_their_provenance_and_decided(monkeypatch: pytest.MonkeyPatch) -> None:
    async def propose() -> list[int]:
        async with await Store.open() as store:
            chat = await store.chats.create("mika", greeting="Hi")
            assert chat.head_id is not None
            ids = []
            for text in ("Kai works night shifts.", "Kai hates \x1b[31mred\x1b[0m."):
                fact = await store.profile.add_fact(text, status=FactStatus.PROPOSED, source="mika", chat_id=chat.id, message_id=chat.head_id)
                ids.append(fact.id)
            return ids

    first, second = asyncio.run(propose())
    shown = run("profile").stdout
    assert f"#{first}  Kai works night shifts.  (learned by mika in chat #1 at message #1)" in shown
    assert "\x1b" not in shown, "a fact a model wrote never reaches the terminal as an escape sequence"
    assert run("profile", "accept", str(first)).exit_code == 0
    assert run("profile", "reject", str(second)).exit_code == 0
    shown = run("profile").stdout
    assert "- Kai works night shifts." in shown and "waiting" not in shown and "red" not in shown
    again = run("profile", "accept", str(second))
    assert again.exit_code == 1 and "not waiting for a decision" in again.stderr
    assert run("profile", "accept", "99").exit_code == 1


def test_a_fact_learned_on_a_path_its_chat_left_is_marked() -> None:
    async def learn_then_leave() -> int:
        async with await Store.open() as store:
            chat = await store.chats.create("mika", greeting="Hi")
            assert chat.head_id is not None
            said = await store.messages.add(chat.id, chat.head_id, Role.USER, "I keep a ferret.")
            fact = await store.profile.add_fact("Kai keeps a ferret.", status=FactStatus.ACTIVE, source="mika",
                                                chat_id=chat.id, message_id=said.id)
            await store.branches.save(chat.id, "greeting", chat.head_id)
            await store.branches.restore(chat.id, "greeting", autosave_name="auto-1")
            return fact.id

    fact_id = asyncio.run(learn_then_leave())
    shown = run("profile").stdout
    assert "- Kai keeps a ferret." in shown
    assert "Learned on a path its chat has left" in shown and f"#{fact_id}  Kai keeps a ferret.  (learned by mika" in shown
    assert run("profile", "add", "plays the ocarina").exit_code == 0
    assert "ocarina  (" not in run("profile").stdout  # a fact you wrote is true on every path
