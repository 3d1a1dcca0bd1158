"""SillyTavern JSONL chats in and out, through a real store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from omoide.domain import Role
from omoide.exchange.sillytavern import ChatFileError, read_chat, write_chat, write_markdown
from omoide.store import Store

HEADER = {"user_name": "Kai", "character_name": "Suzune", "create_date": "2026-04-01@20h15m03s", "chat_metadata": {}}
LINES = [
    {"name": "Suzune", "is_user": False, "is_system": False, "send_date": "April 1, 2026 8:15pm", "mes": "*looks up* Oh. It's you.",
     "swipes": ["*looks up* Oh. It's you.", "We're closing."], "swipe_id": 0},
    {"name": "Kai", "is_user": True, "is_system": False, "send_date": "April 1, 2026 8:16pm", "mes": "One matcha latte, please."},
    {"name": "Suzune", "is_user": False, "is_system": False, "send_date": "April 1, 2026 8:16pm", "mes": "Fine. Sit.",
     "swipes": ["*sighs* Again?", "Fine. Sit.", "We're out of matcha."], "swipe_id": 1},
]


def write_file(path: Path, lines: list[dict]) -> Path:
    path.write_text("\n".join(json.dumps(x) for x in [HEADER, *lines]) + "\n", encoding="utf-8")
    return path


async def test_import_turns_swipes_into_siblings_and_export_gives_them_back(tmp_path: Path) -> None:
    parsed = read_chat(write_file(tmp_path / "chat.jsonl", LINES))
    store = await Store.open(tmp_path / "omoide.db")
    chat = await store.chats.import_tree("suzune", "imported", parsed.nodes, parsed.head_index)
    path = await store.messages.path(chat.head_id)
    assert [(m.role, m.content) for m in path] == [
        (Role.ASSISTANT, "*looks up* Oh. It's you."), (Role.USER, "One matcha latte, please."), (Role.ASSISTANT, "Fine. Sit."),
    ]
    assert [m.content for m in await store.messages.siblings(path[-1])] == ["*sighs* Again?", "Fine. Sit.", "We're out of matcha."]
    assert path[1].created_at.astimezone().strftime("%H:%M") == "20:16"

    swipes = {m.id: await store.messages.siblings(m) for m in path if m.role is Role.ASSISTANT}
    text = write_chat(path, swipes, user_name="Kai", character_name="Suzune", created=chat.created_at)
    await store.close()
    records = [json.loads(line) for line in text.splitlines()]
    assert records[0]["user_name"] == "Kai" and records[0]["character_name"] == "Suzune"
    for ours, theirs in zip(records[1:], LINES, strict=True):
        assert (ours["mes"], ours["is_user"], ours.get("swipes"), ours.get("swipe_id")) == (
            theirs["mes"], theirs["is_user"], theirs.get("swipes"), theirs.get("swipe_id"))
        assert ours["send_date"] == theirs["send_date"]

    again = read_chat(write_file(tmp_path / "again.jsonl", records[1:]))
    assert [n.content for n in again.nodes] == [n.content for n in parsed.nodes]


def test_markdown_export_names_the_speakers() -> None:
    from datetime import UTC, datetime

    from omoide.domain import Message

    msgs = [
        Message(1, 1, None, Role.ASSISTANT, "*waves*", datetime(2026, 4, 1, 20, 0, tzinfo=UTC)),
        Message(2, 1, 1, Role.USER, "Hi!", datetime(2026, 4, 1, 20, 1, tzinfo=UTC)),
    ]
    text = write_markdown(msgs, user_name="Kai", character_name="Suzune", title="Evening")
    assert text.startswith("# Evening") and "**Suzune** ·" in text and "**Kai** ·" in text and "*waves*" in text


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("", "empty"),
        ('{"user_name": "Kai"}\n{not json}\n', "line 2: invalid JSON"),
        ('{"user_name": "Kai"}\n[1, 2]\n', "line 2: a line is not a JSON object"),
        ('{"user_name": "Kai"}\n{"is_user": true}\n', "line 2: 'mes' is missing"),
        ('{"user_name": "Kai"}\n{"mes": "a", "swipes": ["a", "b"], "swipe_id": 7}\n', "line 2: 'swipe_id' 7"),
    ],
)
def test_bad_chat_files_get_a_clear_error(tmp_path: Path, content: str, problem: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ChatFileError) as info:
        read_chat(path)
    assert problem in info.value.message and str(path) in info.value.message


def test_a_binary_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "bin.jsonl"
    path.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(ChatFileError, match="not UTF-8"):
        read_chat(path)
