"""Hostile files and replies through the surface a user meets: a card that is a
decompression bomb, lorebook keys that backtrack forever."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.unit.test_cards import hand_png, zTXt

MEASURED = textwrap.dedent(
    """
    import runpy, sys
    sys.argv = ["omoide", *sys.argv[1:]]
    try:
        runpy.run_module("omoide.cli.app", run_name="__main__")
    finally:
        # VmHWM, not ru_maxrss: Linux carries ru_maxrss over from the parent (pytest) across exec.
        peak = next(line for line in open("/proc/self/status") if line.startswith("VmHWM:")).split()[1]
        print(f"maxrss_kib={peak}", file=sys.stderr)
    """
)


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads the peak RSS from /proc")
def test_a_decompression_bomb_card_is_refused_with_little_memory(tmp_path: Path) -> None:
    # 60 chunks that each inflate to 6 MiB: 360 MiB of text from a file of about 400 KiB.
    six_mib = b"A" * (6 * 1024 * 1024)
    bomb = hand_png(*(zTXt(f"junk{i}", six_mib) for i in range(60)))
    assert len(bomb) < 1_000_000
    card = tmp_path / "bomb.png"
    card.write_bytes(bomb)
    result = subprocess.run([sys.executable, "-c", MEASURED, "characters", "import", str(card)],
                            capture_output=True, timeout=120, env=dict(os.environ))
    err = result.stderr.decode()
    assert result.returncode == 1 and "Traceback" not in err, err
    assert "inflate past 16 MiB in all" in " ".join(err.split()) and "'junk2'" in err
    rss_mib = int(err.rsplit("maxrss_kib=", 1)[1].split()[0]) / 1024
    assert rss_mib < 200, f"{rss_mib:.0f} MiB"


async def test_a_backtracking_lorebook_key_cannot_freeze_a_turn(omoide_home: Path, fault_server) -> None:  # type: ignore[no-untyped-def]
    import asyncio

    from tests.faultserver import Reply, stream_reply
    from tests.integration.test_hostile_text import omoide, write_character

    write_character(omoide_home, "lena", 'name = "Lena"\nfirst_message = "Hi."\n')
    (omoide_home / "data" / "characters" / "lena" / "lorebook.toml").write_text(
        '[[entries]]\nname = "Catastrophe"\nkeys = ["/(a+)+$/", "/^(\\\\w+\\\\s?)*$/"]\ncontent = "Catastrophic lore."\n\n'
        '[[entries]]\nname = "Looking back"\nkeys = ["/(?<=a)b/"]\ncontent = "Lookbehind lore."\n\n'
        '[[entries]]\nname = "Plain"\nkeys = ["/a{3}!/i"]\ncontent = "The A-team lore."\n'
    )

    def reply(request):  # type: ignore[no-untyped-def]
        return Reply(status=404, body=b"{}") if "tokenize" in request.path else stream_reply("Fine.")

    fault_server.queue(*[reply] * 6)
    env = {"OMOIDE_BASE_URL": fault_server.base_url, "OMOIDE_MODEL": "m", "OMOIDE_TOOLS": "inline"}
    # 2^60 steps for a backtracking engine: this would never finish.
    result = await asyncio.to_thread(omoide, "say", "lena", "a" * 60 + "A!", env=env)
    assert result.returncode == 0, result.stderr.decode()
    assert result.stdout.decode().strip() == "Fine."
    prompt = next(r for r in fault_server.requests if r.path.endswith("/chat/completions")).json()
    sent = " ".join(m["content"] or "" for m in prompt["messages"])
    assert "The A-team lore." in sent and "Catastrophic lore." not in sent and "Lookbehind lore." not in sent
    log = (omoide_home / "logs" / "omoide.log").read_text()
    assert "'Looking back' skipped" in log and "lookaround" in log


def tool_call_reply(arguments: str):  # type: ignore[no-untyped-def]
    from tests.faultserver import Reply, sse, text_chunk

    def delta(**d):  # type: ignore[no-untyped-def]
        return {"choices": [{"index": 0, "delta": {"tool_calls": [d]}, "finish_reason": None}]}

    pieces = [arguments[i : i + 65536] for i in range(0, len(arguments), 65536)] or [""]
    body = sse(text_chunk("Noted. "), delta(index=0, id="call_1", type="function", function={"name": "save_memory", "arguments": ""}),
               *(delta(index=0, function={"arguments": p}) for p in pieces),
               {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}, "[DONE]")
    return Reply(chunks=[body])


async def say_with_tool_call(omoide_home: Path, fault_server, arguments: str):  # type: ignore[no-untyped-def]
    import asyncio

    from tests.faultserver import Reply, stream_reply
    from tests.integration.test_hostile_text import omoide

    answers = iter([tool_call_reply(arguments), stream_reply("And on we go.")])

    def reply(request):  # type: ignore[no-untyped-def]
        if not request.path.endswith("/chat/completions"):
            return Reply(status=404, body=b"{}")
        return next(answers, stream_reply("…"))

    fault_server.queue(*[reply] * 8)
    env = {"OMOIDE_BASE_URL": fault_server.base_url, "OMOIDE_MODEL": "m", "OMOIDE_TOOLS": "native"}
    result = await asyncio.wait_for(asyncio.to_thread(omoide, "say", "suzune", "Remember this.", env=env), 120)
    rounds = [r.json() for r in fault_server.requests if r.path.endswith("/chat/completions")]
    return result, rounds


async def test_a_tool_call_with_broken_json_is_reported_to_the_model_the_user_and_the_log(omoide_home: Path, fault_server) -> None:  # type: ignore[no-untyped-def]
    result, rounds = await say_with_tool_call(omoide_home, fault_server, '{"content": "He likes rain.')
    assert result.returncode == 0, result.stderr.decode()
    tool_message = next(m for m in rounds[1]["messages"] if m["role"] == "tool")
    assert "failed" in tool_message["content"] and "not valid JSON" in tool_message["content"]
    assert "Saved to your diary" not in tool_message["content"]
    assert "save_memory failed: its arguments are not valid JSON" in " ".join(result.stderr.decode().split())
    assert "save_memory failed" in (omoide_home / "logs" / "omoide.log").read_text()
    diary = " ".join(__import__("tests.integration.test_hostile_text", fromlist=["omoide"]).omoide("diary", "suzune").stdout.decode().split())
    assert "has not written anything yet" in diary


async def test_a_megabyte_diary_entry_is_cut_and_say_stays_quick(omoide_home: Path, fault_server) -> None:  # type: ignore[no-untyped-def]
    import json

    from omoide.memory.diary import MAX_ENTRY_CHARS

    huge = "x" * 1_000_000
    result, rounds = await say_with_tool_call(omoide_home, fault_server, json.dumps({"content": huge}))
    assert result.returncode == 0, result.stderr.decode()
    assert result.stdout.decode().strip() == "Noted. And on we go."
    tool_message = next(m for m in rounds[1]["messages"] if m["role"] == "tool")
    assert "cut to the first 2,000" in tool_message["content"]
    assert "1,000,000 characters" in " ".join(result.stderr.decode().split())
    import sqlite3

    stored = sqlite3.connect(omoide_home / "data" / "omoide.db").execute("SELECT content FROM diary_entries").fetchall()
    assert [len(row[0]) for row in stored] == [MAX_ENTRY_CHARS + 1]
