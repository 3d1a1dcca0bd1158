"""SillyTavern JSONL chats in and out, through a real store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from omoide.domain.chat import Role
from omoide.exchange.sillytavern import ChatFileError, parse_date, read_chat, write_chat, write_markdown
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
        assert parse_date(ours["send_date"]) == parse_date(theirs["send_date"])  # without the kept fields: SillyTavern's own format

    again = read_chat(write_file(tmp_path / "again.jsonl", records[1:]))
    assert [n.content for n in again.nodes] == [n.content for n in parsed.nodes]


def test_markdown_export_names_the_speakers() -> None:
    from datetime import UTC, datetime

    from omoide.domain.chat import Message

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


ST_LINES = [
    {"name": "Orin", "is_user": False, "is_system": False, "send_date": "2024-6-5 @14h 56m 50s 682ms", "mes": "Mind the gears.",
     "extra": {"gen_id": 1717599410682, "api": "openai", "model": "gpt-4o"}, "force_avatar": "orin.png",
     "swipes": ["Mind the gears.", "*winds a music box*"], "swipe_id": 0,
     "swipe_info": [{"send_date": "2024-6-5 @14h 56m 50s 682ms", "extra": {"api": "openai"}},
                    {"send_date": "2024-6-5 @14h 57m 2s 5ms", "extra": {"api": "openai"}}]},
    {"name": "Kai", "is_user": True, "is_system": False, "send_date": "2024-6-5 @14h 57m 30s 12ms", "mes": "What are they for?",
     "extra": {"bias": "be kind"}},
    {"name": "System", "is_user": False, "is_system": False, "send_date": "2024-6-5 @14h 58m 1s 900ms",
     "mes": "The clocks all strike three at once.", "extra": {"type": "narrator"}},
    {"name": "SillyTavern System", "is_user": False, "is_system": True, "send_date": 1717599500000, "mes": "(hidden note)"},
    {"name": "Orin", "is_user": False, "is_system": False, "send_date": "2024-06-05T14:59:10.250Z", "mes": "Nothing. Everything."},
]
ST_HEADER = {"user_name": "Kai", "character_name": "Orin", "create_date": "2024-6-5@14h56m50s",
             "chat_metadata": {"note_prompt": "Orin is nervous.", "tainted": True, "integrity": "0b9c5e6a"}}


def _cli(*args: str):  # type: ignore[no-untyped-def]
    from typer.testing import CliRunner

    from omoide.cli.app import app

    return CliRunner().invoke(app, list(args), env={"COLUMNS": "200"})


def test_a_sillytavern_chat_round_trips_dates_narrators_and_metadata(tmp_path: Path) -> None:
    from datetime import datetime

    source = tmp_path / "orin.jsonl"
    source.write_text("\n".join(json.dumps(x) for x in [ST_HEADER, *ST_LINES]) + "\n", encoding="utf-8")
    card = tmp_path / "orin.json"
    card.write_text(json.dumps({"spec": "chara_card_v2", "spec_version": "2.0", "data": {"name": "Orin", "first_mes": "Hi."}}))
    assert _cli("characters", "import", str(card)).exit_code == 0
    imported = _cli("import-chat", str(source), "--character", "orin")
    assert imported.exit_code == 0, imported.output

    parsed = read_chat(source)
    moments = [datetime.fromisoformat(n.created_at) for n in parsed.nodes if n.created_at]
    assert len(moments) == len(parsed.nodes)
    first = moments[0].astimezone()
    assert (first.year, first.month, first.day, first.hour, first.minute, first.second, first.microsecond) == (2024, 6, 5, 14, 56, 50, 682000)
    assert [n.role for n in parsed.nodes] == [Role.ASSISTANT, Role.ASSISTANT, Role.USER, Role.SYSTEM, Role.SYSTEM, Role.ASSISTANT]

    exported = _cli("export", "orin", "--format", "jsonl")
    assert exported.exit_code == 0, exported.output
    records = [json.loads(line) for line in exported.stdout.splitlines()]
    header, lines = records[0], records[1:]
    assert header["create_date"] == "2024-6-5@14h56m50s"
    assert {k: v for k, v in header["chat_metadata"].items() if k != "omoide"} == ST_HEADER["chat_metadata"]
    assert len(lines) == len(ST_LINES)
    for ours, theirs in zip(lines, ST_LINES, strict=True):
        for key in ("name", "is_user", "is_system", "send_date", "mes", "extra", "force_avatar", "swipes", "swipe_id"):
            expected = theirs.get(key, {} if key == "extra" else None)  # SillyTavern itself writes an empty extra
            assert ours.get(key) == expected, (key, ours, theirs)
    assert [i["send_date"] for i in lines[0]["swipe_info"]] == [i["send_date"] for i in ST_LINES[0]["swipe_info"]]

    markdown = _cli("export", "orin", "--format", "md").stdout
    assert "**System** · 2024-06-05 14:58:01\n\n*The clocks all strike three at once.*" in markdown
    assert "**Kai** · 2024-06-05 14:57:30\n" in markdown


def test_dates_are_written_in_sillytavern_form_to_the_millisecond() -> None:
    from datetime import datetime

    from omoide.exchange.sillytavern import st_date

    moment = datetime(2024, 6, 5, 14, 56, 50, 682_345).astimezone()
    assert st_date(moment) == "2024-6-5 @14h 56m 50s 682ms"
    assert parse_date(st_date(moment)) == moment.replace(microsecond=682_000).astimezone(UTC_).isoformat(timespec="microseconds")


UTC_ = __import__("datetime").UTC
