"""Hostile input, second round, through the commands a user runs (in a
subprocess, or typer's runner): card names in `omoide end`, template overrides
that pad or look things up, file modes, search brackets, names ending in a
backslash, impossible dates in an imported chat, C1 controls in exports."""

from __future__ import annotations

import asyncio
import json
import os
import re
import sqlite3
import stat
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from markdown_it import MarkdownIt
from typer.testing import CliRunner

from omoide.domain.chat import Role
from omoide.store import Store
from tests.faultserver import Reply, Request, stream_reply
from tests.fakeservers import address, http_server, ollama
from tests.integration.test_endless import MEMORY_ENV
from tests.integration.test_endless import seed as seed_four_messages
from tests.integration.test_hostile_text import assert_inert, omoide, write_character

OSC = "\x1b]52;c;cHduZWQ=\x07\x1b]0;pwned\x07\x1b[2J\x9b31m"
OSC_TOML = "\\u001b]52;c;cHduZWQ=\\u0007\\u001b]0;pwned\\u0007\\u001b[2J\\u009b31m"


class _Forever(list):  # type: ignore[type-arg]
    """A reply queue that never runs out."""

    def __init__(self, handler) -> None:  # type: ignore[no-untyped-def]
        super().__init__()
        self.handler = handler

    def __bool__(self) -> bool:
        return True

    def pop(self, index: int = -1):  # type: ignore[no-untyped-def]
        return self.handler


async def chat_with(home: Path, character_id: str, *texts: str) -> int:
    store = await Store.open(home / "data" / "omoide.db")
    chat = await store.chats.create(character_id, greeting="Welcome in.")
    head = chat.head_id
    for i, text in enumerate(texts):
        head = (await store.messages.add(chat.id, head, Role.USER if i % 2 == 0 else Role.ASSISTANT, text)).id
    await store.close()
    return chat.id


# -- 4: a card name in `omoide end` -----------------------------------------------------------


async def test_omoide_end_shows_a_hostile_card_name_inert(omoide_home: Path, fault_server) -> None:  # type: ignore[no-untyped-def]
    write_character(omoide_home, "evil", f'name = "Evil{OSC_TOML}[/]"\nfirst_message = "Hi."\n')
    await chat_with(omoide_home, "evil", "My exam is on Friday.", "Good luck.")
    fault_server.replies = _Forever(lambda request: stream_reply("Nothing much happened."))
    env = {"OMOIDE_BASE_URL": fault_server.base_url, "OMOIDE_MODEL": "m", "OMOIDE_MAX_RETRIES": "0"}
    result = await asyncio.to_thread(omoide, "end", "evil", env=env)
    text = assert_inert(result)
    assert "Evil␛]52;c;cHduZWQ=␇␛]0;pwned␇␛[2J\ufffd31m[/] is remembering it" in " ".join(text.split())


# -- 7: templates -----------------------------------------------------------------------------

runner = CliRunner()


def run(*args: str):  # type: ignore[no-untyped-def]
    return runner.invoke(__import__("omoide.cli.app", fromlist=["app"]).app, list(args), catch_exceptions=False)


@pytest.fixture
def editor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    script = tmp_path / "editor.py"
    script.write_text(f"#!{sys.executable}\nimport os, sys\nopen(sys.argv[1], 'w').write(os.environ['NEW_TEXT'])\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("EDITOR", str(script))
    return script


@pytest.mark.parametrize("text, problem", [
    ("Sum up {name:>300000000} and {user}.", "pads or extends it past 100 characters"),
    ("Sum up {name:{user.__class__}} and {user}.", "has a placeholder inside its format"),
    ("Sum up {user.__class__.__mro__} and {name}.", "unknown placeholder {user.__class__.__mro__}"),
])
def test_a_template_that_pads_or_looks_things_up_is_refused_when_saved(
    editor: Path, monkeypatch: pytest.MonkeyPatch, text: str, problem: str
) -> None:
    monkeypatch.setenv("NEW_TEXT", text)
    result = run("templates", "edit", "summary")
    assert result.exit_code == 1
    assert problem in " ".join(result.stderr.split()) and "shipped default is used" in " ".join(result.stderr.split())
    assert "summary default (override invalid)" in " ".join(run("templates", "list").stdout.split())


def summary_server(fault_server, seen: list[Request]) -> None:  # type: ignore[no-untyped-def]
    def reply(request: Request) -> Reply:
        seen.append(request)
        if not request.path.endswith("/chat/completions"):
            return Reply(status=404, body=b"{}")
        if "Summary:" in json.dumps(request.json()["messages"][-1]):
            return stream_reply("Kai and Suzune talked about the sea for a long while; she told him about the tides.")
        return stream_reply("The sea is calm.")

    fault_server.replies = _Forever(reply)


@pytest.mark.parametrize("text", [
    "Sum up {name:>2000000} and {user}.",  # written by hand, not through `templates edit`: 2 MB in every request before
    "Sum up {name} and {user:d}.",  # passes the check; fails only when filled in (a name is not a number)
])
async def test_a_broken_template_override_gives_way_to_the_default_with_a_notice(
    omoide_home: Path, fault_server, text: str  # type: ignore[no-untyped-def]
) -> None:
    await seed_four_messages(omoide_home)
    folder = omoide_home / "config" / "templates"
    folder.mkdir(parents=True)
    (folder / "summary.txt").write_text(text)
    seen: list[Request] = []
    summary_server(fault_server, seen)
    env = {"OMOIDE_BASE_URL": fault_server.base_url, **MEMORY_ENV}
    result = await asyncio.wait_for(asyncio.to_thread(omoide, "say", "suzune", "Tell me more.", env=env), 120)
    assert result.returncode == 0, result.stderr.decode()
    err = " ".join(result.stderr.decode().split())
    assert "Your template summary is not used" in err and "Memory updated (summary)" in err
    summaries = [r for r in seen if r.path.endswith("/chat/completions") and b"Summary:" in r.body]
    assert summaries and all(len(r.body) < 100_000 for r in seen)
    assert "Summarize the following conversation" in summaries[-1].body.decode()
    assert "template summary" in (omoide_home / "logs" / "omoide.log").read_text()


# -- 10: file modes ---------------------------------------------------------------------------


@pytest.fixture
def usual_umask() -> Iterator[None]:
    previous = os.umask(0o022)
    yield
    os.umask(previous)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.usefixtures("usual_umask")
def test_every_file_and_folder_omoide_creates_is_private(omoide_home: Path, editor: Path, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    with http_server(ollama("llama3.1:8b")) as olla:
        monkeypatch.setenv("OMOIDE_DISCOVER_SERVERS", json.dumps([address(olla)]))
        assert run("models", "use", "llama3.1:8b").exit_code == 0
    config = omoide_home / "config"
    assert mode(config / "config.toml") == 0o600 and mode(config) == 0o700
    monkeypatch.setenv("NEW_TEXT", "Sum up {name} and {user}.")
    assert run("templates", "edit", "summary").exit_code == 0
    assert mode(config / "templates") == 0o700 and mode(config / "templates" / "summary.txt") == 0o600
    asyncio.run(chat_with(omoide_home, "suzune", "hello"))
    exported = tmp_path / "chat.jsonl"
    # In a process of its own: this one set its logging up before OMOIDE_HOME moved, so it logs elsewhere.
    assert omoide("export", "suzune", "-o", str(exported)).returncode == 0
    assert mode(exported) == 0o600
    for folder in (omoide_home / "data", omoide_home / "logs", omoide_home):
        assert mode(folder) == 0o700, folder
    doctor = run("doctor")
    assert "permissions" not in doctor.stdout, doctor.stdout


# -- 12: search -------------------------------------------------------------------------------

SGR = re.compile(r"\x1b\[([0-9;]*)m")


def styled_and_plain(raw: str) -> tuple[list[str], str]:
    """The runs of text shown with a style, and the text without styles."""
    styled, plain, style = [], [], ""
    for i, part in enumerate(SGR.split(raw)):
        if i % 2:
            style = "" if part in ("", "0") else part
        else:
            plain.append(part)
            if style and part:
                styled.append(part)
    return styled, "".join(plain)


def test_search_shows_brackets_as_typed_and_highlights_only_the_match(omoide_home: Path) -> None:
    asyncio.run(chat_with(omoide_home, "suzune", "I keep [notes] in the [OOC] box, [/] and all, with matcha."))
    result = omoide("search", "suzune", "matcha", env={"FORCE_COLOR": "1", "TERM": "xterm-256color", "COLUMNS": "200"})
    assert result.returncode == 0, result.stderr.decode()
    styled, plain = styled_and_plain(result.stdout.decode())
    assert "[notes] in the [OOC] box, [/] and all, with matcha" in " ".join(plain.split())
    assert "matcha" in styled and not any("notes" in s or "OOC" in s for s in styled)


# -- 13: a name ending in a backslash ---------------------------------------------------------


def test_a_name_ending_in_a_backslash_keeps_it_in_the_diary_heading_and_the_markdown_export(omoide_home: Path) -> None:
    write_character(omoide_home, "slash", 'name = "Back\\\\"\nfirst_message = "Hi."\n')
    asyncio.run(chat_with(omoide_home, "slash", "hello", "hi there"))
    diary = omoide("diary", "slash")
    assert diary.returncode == 0, diary.stderr.decode()
    # Piped, the diary is raw Markdown: the name escaped so that it reads as typed once rendered.
    heading = next(t for t in MarkdownIt().parse(diary.stdout.decode()) if t.type == "inline")
    assert "".join(child.content for child in heading.children or []) == "Back\\'s diary"
    export = omoide("export", "slash", "-f", "md")
    assert bold_texts(export.stdout.decode()) == ["Back\\", "You", "Back\\"]  # the greeting, then the two messages


def bold_texts(markdown: str) -> list[str]:
    """What a Markdown renderer shows in bold, in order."""
    found, current = [], None
    for token in MarkdownIt().parse(markdown):
        for child in token.children or []:
            if child.type == "strong_open":
                current = ""
            elif child.type == "strong_close" and current is not None:
                found.append(current)
                current = None
            elif current is not None:
                current += child.content
    return found


# -- 16: impossible dates in an imported chat -------------------------------------------------


@pytest.mark.parametrize("send_date", [99_999_999_999_999_999, 1e300, "0001-01-01T00:00:00+05:00", "9999-12-31T23:59:59-05:00",
                                       "99999-6-5 @14h 56m 50s 682ms"])
def test_an_impossible_date_in_an_imported_chat_is_named_not_a_traceback(omoide_home: Path, tmp_path: Path,
                                                                            send_date: object) -> None:
    lines = [{"user_name": "Kai", "character_name": "Suzune"},
             {"name": "Kai", "is_user": True, "send_date": "April 1, 2026 8:16pm", "mes": "Hi."},
             {"name": "Suzune", "is_user": False, "send_date": send_date, "mes": "Hello."}]
    path = tmp_path / "chat.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    result = omoide("import-chat", str(path), "-c", "suzune")
    err = " ".join(assert_inert(result).split())
    if isinstance(send_date, str) and "@" in send_date:
        assert result.returncode == 0, err  # not a date SillyTavern writes: imported, dated now, as before
        return
    assert result.returncode == 1
    assert f"Cannot import {path}, line 3:" in err and "out of range" in err and "nothing was imported" in err
    database = omoide_home / "data" / "omoide.db"
    assert not database.exists() or sqlite3.connect(database).execute("SELECT count(*) FROM chats").fetchone() == (0,)


# -- 17: C1 controls in exports ---------------------------------------------------------------


@pytest.mark.parametrize("args", [("export", "suzune", "-f", "jsonl"), ("export", "suzune", "-f", "tree"),
                                  ("memos", "suzune", "--json", "--add", "A memo \x9b31m with \x9d0;title\x9c C1")])
def test_exports_escape_c1_controls_and_keep_the_text(omoide_home: Path, args: tuple[str, ...]) -> None:
    text = "CSI \x9b31m, OSC \x9d0;title\x9c, DEL \x7f, ESC \x1b[2J"
    asyncio.run(chat_with(omoide_home, "suzune", text))
    result = omoide(*args)
    assert result.returncode == 0, result.stderr.decode()
    raw = result.stdout
    for control in ("\x9b", "\x9d", "\x9c", "\x7f", "\x1b"):
        assert control.encode() not in raw, control
    decoded = raw.decode()
    assert "\\u009b31m" in decoded
    if args[0] == "memos":
        assert json.loads(decoded)["memos"][-1]["highlights"] == ["A memo \x9b31m with \x9d0;title\x9c C1"]
    elif args[-1] == "tree":
        assert text in [m["content"] for m in json.loads(decoded)["messages"]]
    else:
        assert text in [json.loads(line).get("mes") for line in decoded.splitlines()]
