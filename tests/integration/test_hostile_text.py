"""Untrusted text through every CLI command a user runs, in a subprocess: control
characters never reach the terminal, markup is never parsed, names are text."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest

from omoide.domain.chat import DiaryAuthor, Role
from omoide.store import Store
from tests.faultserver import Reply, stream_reply

ESCAPES = "\x1b]52;c;cHduZWQ=\x07\x1b]0;pwned\x07\x1b[2J\x9b31m\x1b]8;;http://evil.example\x1b\\link\x1b]8;;\x1b\\"
MARKUP = "[/OOC] [/] [blink]blink[/blink] [link=http://evil.example]click[/link]"
HOSTILE = f"{ESCAPES} {MARKUP} matcha"


def omoide(*args: str, env: dict[str, str] | None = None, stdin: str | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "omoide.cli.app", *args], capture_output=True, timeout=120,
                          env={**os.environ, **(env or {})}, input=stdin.encode() if stdin is not None else None)


def assert_inert(result: subprocess.CompletedProcess[bytes]) -> str:
    """Nothing a terminal would act on, no traceback; returns the output as text."""
    raw = result.stdout + result.stderr
    assert b"\x1b" not in raw and "\x9b".encode() not in raw and b"\x07" not in raw, raw[:400]
    text = raw.decode()
    assert "Traceback" not in text, text
    return text


async def seed(home: Path) -> int:
    store = await Store.open(home / "data" / "omoide.db")
    chat = await store.chats.create("suzune", title=f"Title {HOSTILE}", greeting=f"Hello {HOSTILE}")
    user = await store.messages.add(chat.id, chat.head_id, Role.USER, f"I say {HOSTILE}")
    reply = await store.messages.add(chat.id, user.id, Role.ASSISTANT, f"She says {HOSTILE}")
    await store.memory.add_diary_entry(chat.id, reply.id, f"Dear diary {HOSTILE}", DiaryAuthor.CHARACTER)
    await store.memory.add_summary(chat.id, reply.id, content=f"The story {HOSTILE}", covers_to_id=user.id, diary_to_id=None)
    await store.branches.save(chat.id, "before", reply.id)
    await store.close()
    return chat.id


@pytest.mark.parametrize("args", [
    ("diary", "suzune"), ("summary", "suzune"), ("export", "suzune", "-f", "md"), ("chats",),
    ("branches", "suzune"), ("search", "suzune", "matcha"),
])
def test_stored_text_is_shown_inert_and_never_as_markup(omoide_home: Path, args: tuple[str, ...]) -> None:
    asyncio.run(seed(omoide_home))
    result = omoide(*args)
    assert result.returncode == 0, result.stderr.decode()
    text = assert_inert(result)
    assert "␛" in text  # made visible, not dropped silently
    if args[0] not in ("search", "branches"):  # those show a snippet / the opening words
        assert "[/OOC]" in text and "[blink]" in text


def test_export_md_to_a_file_keeps_the_text_as_stored(omoide_home: Path, tmp_path: Path) -> None:
    asyncio.run(seed(omoide_home))
    target = tmp_path / "chat.md"
    assert omoide("export", "suzune", "-f", "md", "-o", str(target)).returncode == 0
    assert HOSTILE in target.read_text()


async def test_say_streams_a_hostile_reply_inert_and_stores_it_as_received(omoide_home: Path, fault_server) -> None:  # type: ignore[no-untyped-def]
    def reply(request):  # type: ignore[no-untyped-def]
        if "tokenize" in request.path:
            return Reply(status=404, body=b"{}")
        return stream_reply("Line one\r", "\nLine two ", ESCAPES, " ", MARKUP)

    fault_server.queue(*[reply] * 6)
    env = {"OMOIDE_BASE_URL": fault_server.base_url, "OMOIDE_MODEL": "m"}
    result = await asyncio.to_thread(omoide, "say", "suzune", "hi", env=env)
    assert result.returncode == 0, result.stderr.decode()
    out = assert_inert(result)
    assert "Line one\nLine two ␛]52;c;" in out and MARKUP in out
    store = await Store.open(omoide_home / "data" / "omoide.db")
    stored = (await store.db.one("SELECT content FROM messages WHERE role = 'assistant' ORDER BY id DESC LIMIT 1"))[0]
    await store.close()
    assert ESCAPES in stored and MARKUP in stored


async def test_a_server_error_is_shown_inert_and_not_as_markup(fault_server) -> None:  # type: ignore[no-untyped-def]
    body = ('{"error": {"message": "' + MARKUP + ' \\u001b]52;c;cHduZWQ=\\u0007 [/]"}}').encode()
    fault_server.queue(*[Reply(status=400, body=body)] * 6)
    env = {"OMOIDE_BASE_URL": fault_server.base_url, "OMOIDE_MODEL": "m"}
    result = await asyncio.to_thread(omoide, "say", "suzune", "hi", env=env)
    assert result.returncode == 1
    text = assert_inert(result)
    assert "[blink]blink[/blink]" in text and "[/]" in text


def write_character(home: Path, folder: str, toml: str) -> None:
    target = home / "data" / "characters" / folder
    target.mkdir(parents=True)
    (target / "character.toml").write_text(toml, encoding="utf-8")


def test_names_with_backslashes_and_hostile_card_fields(omoide_home: Path) -> None:
    write_character(omoide_home, "slash", 'name = "Back\\\\slash \\\\g<0> \\\\1 \\\\n"\n'
                    'description = "{{char}} meets {{user}}. \\u001b]0;pwned\\u0007 [/OOC]\\r\\nSecond line"\n'
                    'first_message = "Hi {{user}}, I am {{char}}."\n')
    listing = omoide("characters", "list")
    assert listing.returncode == 0, listing.stderr.decode()
    text = assert_inert(listing)
    assert "slash" in text and "suzune" in text  # every character is listed, the odd one included
    shown = omoide("characters", "show", "slash")
    text = assert_inert(shown)
    assert "\ufffd" not in text and "[/OOC]\nSecond line" in text  # CRLF shown as a line break
    env = {"OMOIDE_USER_NAME": "Kai\\n\\g<0>"}
    said = omoide("say", "slash", "hello", env={**env, "OMOIDE_BASE_URL": "http://127.0.0.1:9/v1"})
    assert said.returncode == 1 and "Cannot reach" in assert_inert(said)  # it got as far as the backend
    exported = omoide("export", "slash", "-f", "jsonl", env=env)
    assert "Hi Kai\\\\n\\\\g<0>, I am Back\\\\slash \\\\g<0> \\\\1 \\\\n." in exported.stdout.decode()


KEY = "sk-Live0123456789abcdefXYZ"


async def test_the_api_key_never_reaches_stderr_or_the_log_whole_cut_or_lowercased(omoide_home: Path, fault_server) -> None:  # type: ignore[no-untyped-def]
    echo = f"{'x' * 290} Incorrect API key provided: {KEY}. Also {KEY.lower()} and {KEY.upper()[:12]}… and {KEY[-9:]}"
    body = ('{"error": {"message": "' + echo + '"}}').encode()
    fault_server.queue(*[Reply(status=401, body=body)] * 6)
    env = {"OMOIDE_BASE_URL": fault_server.base_url, "OMOIDE_MODEL": "m", "OMOIDE_API_KEY": KEY}
    result = await asyncio.to_thread(omoide, "say", "suzune", "hi", env=env)
    assert result.returncode == 1
    log = (omoide_home / "logs" / "omoide.log").read_text() if (omoide_home / "logs" / "omoide.log").exists() else ""
    for where in (result.stderr.decode().replace("\n", ""), result.stdout.decode(), log):
        lowered = where.lower()
        assert not any(KEY.lower()[i : i + 8] in lowered for i in range(len(KEY) - 7)), where
    assert "refused the API key" in result.stderr.decode()
