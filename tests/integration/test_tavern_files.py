"""SillyTavern's files in and out, as a user runs the commands: group chats as
scenes, hidden messages and dates on export, personas, a folder of cards, and
the lore budget notice on `omoide say`. Every file is built here.

Citations: "Personas" is https://docs.sillytavern.app/usage/core-concepts/personas/
(SillyTavern-Docs Usage/personas.md); SillyTavern's public/scripts/personas.js
(power_user.personas, persona_descriptions, the backup format),
public/scripts/group-chats.js (each group message under its character's `name`),
public/scripts/RossAscends-mods.js (humanizedDateTime, the chat file date)."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import re
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from omoide.characters.png import blank_png, read_chunks, text_chunks
from omoide.cli.app import app
from omoide.exchange.sillytavern import st_file_date
from tests.faultserver import FaultServer, Reply, Request, stream_reply

runner = CliRunner()


def run(*args: str) -> Any:
    return runner.invoke(app, list(args), catch_exceptions=False, env={"COLUMNS": "200", "OMOIDE_USER_NAME": "Kai"})


def card_file(folder: Path, name: str, **fields: Any) -> Path:
    path = folder / f"{name.lower()}.json"
    path.write_text(json.dumps({"spec": "chara_card_v2", "spec_version": "2.0", "data": {"name": name, "first_mes": "Hi.", **fields}}))
    return path


def jsonl(path: Path, *records: dict[str, Any]) -> Path:
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    return path


GROUP = [  # SillyTavern 1.12's group chat file: no header line, each message under its speaker's name
    {"name": "Alice", "is_user": False, "is_system": False, "send_date": "2026-4-1 @20h 1m 2s 3ms", "mes": "Welcome in.",
     "original_avatar": "Alice.png", "extra": {}},
    {"name": "Kai", "is_user": True, "is_system": False, "send_date": "2026-4-1 @20h 2m 2s 3ms", "mes": "Two coffees."},
    {"name": "Bob", "is_user": False, "is_system": False, "send_date": "2026-4-1 @20h 3m 2s 3ms", "mes": "Coming up.",
     "swipes": ["Coming up.", "We're out."], "swipe_id": 0, "original_avatar": "Bob.png"},
    {"name": "Kai", "is_user": True, "is_system": True, "send_date": "2026-4-1 @20h 4m 2s 3ms", "mes": "(hidden aside)"},
    {"name": "Alice", "is_user": False, "is_system": False, "send_date": "2026-4-1 @20h 5m 2s 3ms", "mes": "Anything else?"},
]


def test_a_group_chat_becomes_a_scene_and_exports_every_name(tmp_path: Path) -> None:
    """group-chats.js writes each character's message under its `name`: each speaker is
    matched to a character (Alice from the library, Bob from a card imported alongside),
    the chat opens as a scene with both, and the export gives every name back, a hidden
    message of yours stays yours (is_user with is_system), and no header is added to a
    group file that had none."""
    assert run("characters", "import", str(card_file(tmp_path, "Alice"))).exit_code == 0
    bob = card_file(tmp_path, "Bob")
    chat = jsonl(tmp_path / "group.jsonl", *GROUP)
    refused = run("import-chat", str(chat))
    assert refused.exit_code == 1 and "no character is called Bob" in " ".join(refused.output.split())
    assert "No chats yet" in run("chats").output  # nothing was imported
    result = run("import-chat", str(chat), "--card", str(bob))
    assert result.exit_code == 0, result.output
    assert "a scene with Alice, Bob" in result.output and "omoide chat alice bob" in result.output

    async def scene() -> tuple[list[str], list[Any]]:
        from omoide.characters.library import find_character
        from omoide.config.settings import Settings
        from omoide.chat.session import ChatSession
        from omoide.store import Store
        from tests.scripted import ScriptedBackend

        store = await Store.open()
        try:
            backend = ScriptedBackend(default=lambda m: ["Sure."])
            session = await ChatSession.open(store, find_character("alice"), Settings(user_name="Kai"), backend,
                                             others=[find_character("bob")])
            path = await session.transcript()
            said = [f"{session.scene.speaker_name(m)}: {m.content}" for m in path]
            [event async for event in session.send("Bob, a cookie too.")]
            await session.wait_for_memory_work()
            await session.aclose()
            return said, backend.calls[-1]["messages"]
        finally:
            await store.close()

    said, prompt = asyncio.run(scene())
    assert said == ["Alice: Welcome in.", "Kai: Two coffees.", "Bob: Coming up.", ": (hidden aside)", "Alice: Anything else?"]
    assert "Alice: " in json.dumps(prompt) and "You are Bob" in prompt[0]["content"]  # Bob was named, so Bob answers

    exported = run("export", "bob", "--format", "jsonl")
    lines = [json.loads(line) for line in exported.stdout.splitlines()]
    assert [(r["name"], r["is_user"], r["is_system"], r["mes"]) for r in lines] == [
        ("Alice", False, False, "Welcome in."), ("Kai", True, False, "Two coffees."), ("Bob", False, False, "Coming up."),
        ("Kai", True, True, "(hidden aside)"), ("Alice", False, False, "Anything else?"), ("Kai", True, False, "Bob, a cookie too."),
        ("Bob", False, False, "Sure."),
    ]
    assert lines[2]["swipes"] == ["Coming up.", "We're out."] and lines[0]["original_avatar"] == "Alice.png"


def test_a_group_chat_with_thousands_of_unknown_speakers_names_a_few_and_counts_the_rest(tmp_path: Path) -> None:
    """A group chat of 5,000 speakers no character is called: the refusal stays a
    readable line or two (a few names and how many more), not 135 KB naming them all."""
    speakers = [f"Stranger{i:04d}" for i in range(5000)]
    chat = jsonl(tmp_path / "crowd.jsonl", *({"name": name, "is_user": False, "mes": "Hello."} for name in speakers))
    refused = run("import-chat", str(chat))
    said = " ".join(refused.output.split())
    assert refused.exit_code == 1 and "no character is called Stranger0000, Stranger0001" in said
    assert "and 4,990 more" in said and "Stranger4999" not in said
    assert len(refused.output) < 2000
    assert "No chats yet" in run("chats").output


def test_a_one_on_one_chat_finds_its_character_by_name(tmp_path: Path) -> None:
    assert run("characters", "import", str(card_file(tmp_path, "Orin"))).exit_code == 0
    chat = jsonl(tmp_path / "orin.jsonl", {"user_name": "Kai", "character_name": "Orin", "create_date": "2026-4-1@20h1m2s", "chat_metadata": {}},
                 {"name": "Orin", "is_user": False, "mes": "Mind the gears."})
    result = run("import-chat", str(chat))
    assert result.exit_code == 0 and "with Orin" in result.output and "omoide chat orin --chat" in result.output


def test_export_writes_dates_as_sillytavern_does(tmp_path: Path) -> None:
    """RossAscends-mods.js humanizedDateTime pads every part: 2026-11-24@23h02m17s."""
    assert st_file_date(datetime(2026, 1, 4, 3, 2, 7).astimezone()) == "2026-01-04@03h02m07s"
    assert st_file_date(datetime(2026, 11, 24, 23, 2, 17).astimezone()) == "2026-11-24@23h02m17s"
    assert run("characters", "import", str(card_file(tmp_path, "Orin"))).exit_code == 0

    async def new_chat() -> None:
        from omoide.characters.library import find_character
        from omoide.scene.opening import create_chat
        from omoide.store import Store

        async with await Store.open() as store:
            await create_chat(store, find_character("orin"), "Kai")

    asyncio.run(new_chat())
    header = json.loads(run("export", "orin", "--format", "jsonl").stdout.splitlines()[0])
    assert re.fullmatch(r"\d{4}-\d\d-\d\d@\d\dh\d\dm\d\ds", header["create_date"]), header


def settings_json(tmp_path: Path) -> Path:
    folder = tmp_path / "default-user"
    (folder / "User Avatars").mkdir(parents=True)
    (folder / "User Avatars" / "rhea.png").write_bytes(blank_png(8, 8, (200, 30, 30)))
    (folder / "User Avatars" / "broken.png").write_bytes(b"not a png")
    path = folder / "settings.json"
    path.write_text(json.dumps({"power_user": {
        "personas": {"rhea.png": "Captain Rhea", "lee.png": "Lee", "broken.png": "Bram", "empty.png": ""},
        "persona_descriptions": {
            "rhea.png": {"description": "{{user}} is a sea captain with a scar; {{char}} fears her.", "position": 0, "title": "Captain"},
            "lee.png": {"description": "A quiet cartographer."},
        },
        "default_persona": "rhea.png",
    }}))
    return path


def test_personas_import_from_sillytaverns_settings(tmp_path: Path, omoide_home: Path) -> None:
    """Personas (docs: a persona is a name, an avatar and a description); personas.js keeps
    them in settings.json's power_user.personas (avatar file -> name) and persona_descriptions,
    the avatars in "User Avatars"."""
    result = run("personas", "import", str(settings_json(tmp_path)))
    assert result.exit_code == 0, result.output
    assert "Captain Rhea with its avatar" in result.output and "Imported 3 persona(s)" in result.output
    assert "Lee: imported without an avatar" in result.output and "broken.png is not a readable PNG" in result.output
    assert "empty.png: it has no name" in result.output
    avatar = next((omoide_home / "data" / "personas").glob("captain-rhea/avatar.png")).read_bytes()
    assert avatar == blank_png(8, 8, (200, 30, 30))
    again = run("personas", "import", str(settings_json(tmp_path / "again")))
    assert "Captain Rhea (rhea.png): a persona of that name already exists" in again.output
    listing = run("personas", "list").output
    assert "Captain Rhea" in listing and "SillyTavern import" in listing and "sea captain" in listing


def _serve(server: FaultServer) -> None:
    def answer(request: Request) -> Reply:
        if "/chat/completions" not in request.path:
            return Reply(status=404, body=b'{"error": {"message": "not here"}}')
        return stream_reply("Aye.")

    class Forever(list):  # type: ignore[type-arg]
        def pop(self, index: int = -1) -> Any:  # type: ignore[override]
            return answer

    server.replies = Forever([answer])  # type: ignore[assignment]


async def omoide(env: dict[str, str], *args: str) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "omoide.cli.app", *args, env=env,
                                                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await proc.communicate()
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


async def test_say_as_an_imported_persona_and_the_budget_notice(tmp_path: Path, omoide_home: Path) -> None:
    """`omoide say --persona NAME` speaks as that persona ({{user}} is its name, its
    description in the card, its macros expanded); issue 24: a constant lore entry
    the budget drops is said on stderr; issue 33: your message's macros are expanded
    in the prompt, and the export keeps what you typed."""
    assert run("personas", "import", str(settings_json(tmp_path))).exit_code == 0
    big = {"entries": [{"keys": [], "content": "The harbour town of Kesh. " * 60, "constant": True, "name": "Kesh"}]}
    card = card_file(tmp_path, "Mika", description="{{char}} bakes for {{user}}.", character_book=big)
    assert run("characters", "import", str(card)).exit_code == 0
    server = FaultServer()
    _serve(server)
    await server.start()
    env = {**os.environ, "OMOIDE_BASE_URL": server.base_url, "OMOIDE_MODEL": "scripted", "OMOIDE_USER_NAME": "Kai",
           "OMOIDE_MAX_RETRIES": "0", "OMOIDE_CONTEXT_SIZE": "1024", "OMOIDE_MAX_TOKENS": "100", "COLUMNS": "200"}
    try:
        code, out, err = await omoide(env, "say", "mika", "--persona", "captain rhea", "Ahoy, {{char}}!")
        assert code == 0, err
        assert out == "Aye.\n"
        assert "Lore left out: 'Kesh'" in " ".join(err.split())
        sent = [r.json() for r in server.requests if "/chat/completions" in r.path][-1]["messages"]
        system = sent[0]["content"]
        assert "Mika bakes for Captain Rhea." in system
        assert "## Captain Rhea\nCaptain Rhea is a sea captain with a scar; Mika fears her." in system
        assert sent[-2]["content"].endswith("Ahoy, Mika!")
        code, exported, err = await omoide(env, "export", "mika", "--format", "jsonl")
        assert code == 0, err
        records = [json.loads(line) for line in exported.splitlines()[1:]]
        assert [r["mes"] for r in records if r.get("is_user")] == ["Ahoy, {{char}}!"]  # issue 33: as typed
        code, out, err = await omoide(env, "say", "mika", "--persona", "Nobody", "hi")
        assert code == 1 and "There is no persona named 'Nobody'" in err
    finally:
        await server.stop()


def test_characters_import_takes_a_folder_and_names_what_it_refuses(tmp_path: Path) -> None:
    """Issue 24: `omoide characters import DIR` imports every card in it and names each file it refuses, and why."""
    folder = tmp_path / "cards"
    folder.mkdir()
    card_file(folder, "Alice")
    from omoide.characters.cards import character_from_card, export_card_png

    bob = character_from_card({"spec": "chara_card_v2", "spec_version": "2.0", "data": {"name": "Bob", "first_mes": "Yo."}})
    (folder / "bob.png").write_bytes(export_card_png(bob, blank_png()))
    (folder / "broken.json").write_text("{not json")
    (folder / "plain.png").write_bytes(blank_png())
    (folder / "notes.txt").write_text("hello")
    (folder / "more").mkdir()
    result = run("characters", "import", str(folder))
    text = " ".join(result.output.split())
    assert result.exit_code == 1
    assert "→ alice (Alice)" in text and "→ bob (Bob)" in text
    assert "broken.json: it holds invalid JSON" in text or "broken.json" in text and "invalid JSON" in text
    assert "plain.png: the PNG holds no character card" in text or "plain.png" in text and "no character card" in text
    assert "notes.txt: not a card file (.png or .json)" in text and "more: a folder" in text
    assert "Imported 2 of 4 card(s); refused 4 file(s)." in text
    listing = run("characters", "list").output
    assert "alice" in listing and "bob" in listing


def test_a_card_with_notes_and_positioned_lore_round_trips_exactly(tmp_path: Path) -> None:
    """No regression in the card round trip: the Character's Note and SillyTavern's lore
    fields (position, depth, role, group...) come back exactly, in JSON and in both PNG chunks."""
    fields = {
        "extensions": {"depth_prompt": {"prompt": "Smell of oil.", "depth": 2, "role": "user"}, "talkativeness": "0.4"},
        "character_book": {"name": "Workshop", "entries": [
            {"keys": ["gear"], "content": "Gears.", "enabled": True, "insertion_order": 10, "position": "before_char",
             "use_regex": True, "id": 3, "extensions": {"position": 4, "depth": 2, "role": 1, "group": "g", "group_weight": 50,
                                                        "selectiveLogic": 2, "sticky": 2, "display_index": 0}},
        ]},
    }
    source = card_file(tmp_path, "Orin", **fields)
    assert run("characters", "import", str(source)).exit_code == 0
    out = tmp_path / "out.json"
    assert run("characters", "export", "orin", "--format", "json", "--output", str(out)).exit_code == 0
    assert json.loads(out.read_text()) == json.loads(source.read_text())
    png = tmp_path / "out.png"
    assert run("characters", "export", "orin", "--output", str(png)).exit_code == 0
    chunks = text_chunks(read_chunks(png.read_bytes()))
    v2 = json.loads(base64.b64decode(chunks["chara"]))
    assert v2["data"]["extensions"] == fields["extensions"] and v2["data"]["character_book"] == fields["character_book"]


async def test_say_tells_on_stderr_what_of_a_long_card_did_not_fit(tmp_path: Path, omoide_home: Path) -> None:
    """Issue 33, item 13: a card longer than the context was cut silently; `omoide say`
    now says on stderr which fields were left out and by how many tokens, and the log too."""
    card = card_file(tmp_path, "Mika", description="Mika remembers everything. " * 3000, scenario="A bakery at dawn.")
    assert run("characters", "import", str(card)).exit_code == 0
    server = FaultServer()
    _serve(server)
    await server.start()
    env = {**os.environ, "OMOIDE_BASE_URL": server.base_url, "OMOIDE_MODEL": "scripted", "OMOIDE_USER_NAME": "Kai",
           "OMOIDE_MAX_RETRIES": "0", "OMOIDE_CONTEXT_SIZE": "2048", "OMOIDE_MAX_TOKENS": "200", "COLUMNS": "200"}
    try:
        code, out, err = await omoide(env, "say", "mika", "Hello.")
    finally:
        await server.stop()
    assert code == 0, err
    assert out == "Aye.\n"
    said = " ".join(err.split())
    assert "Mika's card does not fit the context" in said, err
    assert re.search(r"the end of the card's description, [\d,]+ tokens; the card's scenario, \d+ tokens", said), said
    logged = " ".join(p.read_text(encoding="utf-8") for p in omoide_home.rglob("*.log"))
    assert "Mika's card does not fit the context" in logged
