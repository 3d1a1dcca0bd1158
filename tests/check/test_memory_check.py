"""`omoide memory check` on the oracle: the figures the design must reach.

The oracle's memory work copies every fact it is given; its answers are an
ideal reader's. So here a fact is found exactly when the design kept it in
reach of the prompt, and the check's figures are the design's own: every
memory style keeps every fact the script plants, the window-only baseline
keeps none once they have left the window, and no character knows what it
was not told."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from omoide.check.arms import ARMS, arm
from omoide.check.oracle import OracleBackend
from omoide.check.results import ArmResult
from omoide.check.run import CheckReport, run_check
from omoide.check.script import CATEGORIES, FACTS
from omoide.cli.app import app
from omoide.config.settings import Settings

STYLES = [a.name for a in ARMS if not a.baseline]


@pytest.fixture(scope="module")
def oracle_report(tmp_path_factory: pytest.TempPathFactory) -> CheckReport:
    import asyncio

    home = tmp_path_factory.mktemp("home")
    saved = os.environ.get("OMOIDE_HOME")
    os.environ["OMOIDE_HOME"] = str(home)
    try:
        settings = Settings(discover_servers=[])
        turns: list[int] = []
        report = asyncio.run(run_check(settings, OracleBackend(), oracle=True, advance=turns.append))
    finally:
        if saved is None:
            os.environ.pop("OMOIDE_HOME", None)
        else:
            os.environ["OMOIDE_HOME"] = saved
    assert sum(turns) == len(ARMS) * len(report.arms[0].turns)  # the progress bar saw every turn
    assert not list(home.iterdir()), "the check wrote into the data directory it was started with"
    return report


def result(report: CheckReport, name: str) -> ArmResult:
    return next(r for r in report.arms if r.arm == name)


def test_every_memory_style_keeps_and_finds_every_planted_fact(oracle_report: CheckReport) -> None:
    for name in STYLES:
        found = result(oracle_report, name)
        assert not found.error, found.error
        for category in CATEGORIES:
            assert found.accuracy(category) == 1.0, (name, category, [a for a in found.answers if not a.correct])
            if category != "abstention":
                assert found.accuracy(category, kept=True) == 1.0, (name, category)
        assert all(h.censored for h in found.horizons), (name, found.horizons)  # no fact ever left the prompt
        assert found.horizon() == f"≥{max(h.messages for h in found.horizons)}"


def test_the_window_alone_loses_every_fact_once_it_has_left_the_window(oracle_report: CheckReport) -> None:
    window = result(oracle_report, "window")
    settings = Settings()
    for category in ("single", "updated", "time"):
        assert window.accuracy(category) == 0.0 and window.accuracy(category, kept=True) == 0.0, category
    assert window.horizon() == str(settings.memory.recent_messages)  # the memory horizon of no memory: the window
    by_probe = {a.probe: a for a in window.answers}
    assert by_probe["own_chat"].correct and by_probe["invited"].correct  # she does not know what she never heard
    assert not by_probe["told"].correct  # and forgets what she heard once it leaves her window


def test_full_context_and_search_find_everything_the_window_lost(oracle_report: CheckReport) -> None:
    full, search = result(oracle_report, "full"), result(oracle_report, "search")
    assert full.overflow_at is None and full.accuracy() == 1.0 and full.accuracy(kept=True) == 1.0
    # The search baseline holds nothing in its prompt: every fact came back through the recall tool.
    assert search.accuracy() == 1.0 and search.horizon() == result(oracle_report, "window").horizon()
    assert all("Let me think." in a.answer for a in search.answers if a.category != "abstention")


def test_no_character_knows_a_secret_it_was_not_told_in_any_arm(oracle_report: CheckReport) -> None:
    for found in oracle_report.arms:
        before = [a for a in found.answers if a.probe in ("own_chat", "invited")]
        assert len(before) == 2 and all(a.kept and a.correct for a in before), (found.arm, before)
        assert all("reykjavik" not in a.answer.casefold() for a in before)


def test_what_each_arm_costs_is_measured_per_turn(oracle_report: CheckReport) -> None:
    for found in oracle_report.arms:
        assert found.turns and all(t.prompt_tokens > 0 and t.token_source == "estimate" for t in found.turns)
        assert found.reply_seconds() is not None and found.memory_seconds() is not None
    window = result(oracle_report, "window").tokens_per_turn()
    assert window is not None
    for name in ("full", "summary", "memos", "both", "both+world"):
        tokens = result(oracle_report, name).tokens_per_turn()
        assert tokens is not None and tokens > window, name  # memory costs prompt tokens; the window is the floor
    assert {h.fact for h in result(oracle_report, "summary").horizons} == {f.key for f in FACTS}


def test_a_small_context_shows_when_full_context_stops_fitting(tmp_path: Path) -> None:
    import asyncio

    settings = Settings(context_size=1024, max_tokens=200)
    report = asyncio.run(run_check(settings, OracleBackend(), arms=[arm("full")], padding=4, oracle=True))
    full = report.arms[0]
    assert full.overflow_at is not None and full.overflow_at > 0
    assert full.accuracy(kept=True) is not None and full.accuracy(kept=True) < 1.0  # what no longer fit is lost


runner = CliRunner()


def test_the_cli_prints_the_table_and_json(omoide_home: Path) -> None:
    out = runner.invoke(app, ["memory", "check", "--oracle", "--arms", "window,summary", "--padding", "4"],
                        catch_exceptions=False)
    assert out.exit_code == 0, out.output
    for words in ("Memory check: oracle", "window", "summary", "horizon", "tokens/turn", "load average"):
        assert words in out.output, words
    out = runner.invoke(app, ["memory", "check", "--oracle", "--arms", "summary", "--padding", "4", "--json"],
                        catch_exceptions=False)
    data = json.loads(out.stdout)
    assert data["oracle"] is True and [a["arm"] for a in data["arms"]] == ["summary"]
    figures = data["arms"][0]["figures"]
    assert figures["accuracy"]["single"] == 1.0 and figures["prompt_token_source"] == "estimate"
    assert {a["probe"] for a in data["arms"][0]["answers"]} >= {"cat", "home", "three_days", "dog", "told"}


def test_an_unknown_arm_is_named_with_the_ones_there_are(omoide_home: Path) -> None:
    out = runner.invoke(app, ["memory", "check", "--oracle", "--arms", "summary,telepathy"])
    assert out.exit_code == 1
    assert "telepathy" in out.output and "both+world" in out.output


async def test_the_json_escapes_c1_controls_in_answers_and_the_model_name(
    omoide_home: Path, fault_server  # type: ignore[no-untyped-def]
) -> None:
    """A model named and answering with CSI/OSC: `--json` writes them as \\u escapes
    (as `export` does), so printing the figures never drives the terminal."""
    import asyncio
    import subprocess
    import sys

    from tests.faultserver import Reply, Request, stream_reply

    hostile = "CSI \x9b31m, OSC \x9d0;title\x9c, DEL \x7f"

    def reply(request: Request) -> Reply:
        if not request.path.endswith("/chat/completions"):
            return Reply(status=404, body=b"{}")
        return stream_reply(f"I recall: {hostile}")

    class Forever(list):  # type: ignore[type-arg]
        def __bool__(self) -> bool:
            return True

        def pop(self, index: int = -1):  # type: ignore[no-untyped-def]
            return reply

    fault_server.replies = Forever()
    env = {**os.environ, "OMOIDE_BASE_URL": fault_server.base_url, "OMOIDE_MODEL": f"model {hostile}",
           "OMOIDE_DISCOVER_SERVERS": "[]"}
    result = await asyncio.to_thread(
        subprocess.run, [sys.executable, "-m", "omoide.cli.app", "memory", "check", "--arms", "window", "--padding", "1", "--json"],
        capture_output=True, timeout=300, env=env,
    )
    assert result.returncode == 0, result.stderr.decode()[-2000:]
    for control in ("\x9b", "\x9d", "\x9c", "\x7f"):
        assert control.encode() not in result.stdout, control
    data = json.loads(result.stdout)
    assert data["model"] == f"model {hostile}"
    assert any(hostile in a["answer"] for a in data["arms"][0]["answers"])
