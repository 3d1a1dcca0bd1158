"""`omoide memory check` on the oracles and against a server that games it.

The oracles' answers are an ideal reader's, so on them a fact is found exactly
when the design kept it in reach. The reader oracle's memory work knows the
answer key and copies every fact; the writer oracle's does not, and keeps what
an extractive writer picks. The check must show where each design loses facts
(no longer 100 in every cell), must not be fooled by a server that names every
candidate, and must run scenario files written outside the project."""

from __future__ import annotations

import asyncio
import json
import re
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from omoide.check.arms import arm
from omoide.check.oracle import OracleBackend
from omoide.check.results import ArmResult
from omoide.check.run import CheckReport, run_check, search_settings
from omoide.check.scenario import shipped
from omoide.cli.app import app
from omoide.config.settings import Settings
from tests.fakeservers import address, chat_reply, http_server

ARMS = ("window", "full", "search", "summary", "memos", "summary+world")
SCENARIO = "evenings-1"


def _scenario():  # type: ignore[no-untyped-def]
    return next(s for s in shipped() if s.name == SCENARIO)


@pytest.fixture(scope="module")
def oracle_report(tmp_path_factory: pytest.TempPathFactory) -> CheckReport:
    home = tmp_path_factory.mktemp("home")
    saved = os.environ.get("OMOIDE_HOME")
    os.environ["OMOIDE_HOME"] = str(home)
    try:
        turns: list[int] = []
        report = asyncio.run(run_check(Settings(discover_servers=[]), [OracleBackend("reader"), OracleBackend("writer")],
                                       arms=[arm(a) for a in ARMS], scenarios=[_scenario()], advance=turns.append))
    finally:
        if saved is None:
            os.environ.pop("OMOIDE_HOME", None)
        else:
            os.environ["OMOIDE_HOME"] = saved
    assert sum(turns) == sum(len(r.turns) for r in report.arms)  # the progress bar saw every turn
    assert not list(home.iterdir()), "the check wrote into the data directory it was started with"
    return report


def result(report: CheckReport, name: str, oracle: str = "reader") -> ArmResult:
    return next(r for r in report.arms if r.arm == name and r.oracle == oracle)


def test_the_window_alone_keeps_nothing_that_left_it(oracle_report: CheckReport) -> None:
    window = result(oracle_report, "window")
    assert not window.error, window.error
    for category in ("single", "indirect", "preference", "update", "multihop", "pinned", "new_chat"):
        assert window.accuracy(category, kept=True) == 0.0, category
    assert int(window.horizon()) <= Settings().memory.recent_messages


def test_the_reader_oracle_is_no_longer_100_everywhere_and_shows_where_designs_lose(oracle_report: CheckReport) -> None:
    summary, memos = result(oracle_report, "summary"), result(oracle_report, "memos")
    assert summary.accuracy("single", kept=True) == 1.0 and summary.accuracy("update", kept=True) == 1.0
    # The memo book keeps three highlights of eight messages: a dense story loses facts there.
    assert memos.accuracy(kept=True) < summary.accuracy(kept=True)  # type: ignore[operator]
    # Neither keeps what carries over to a new chat without the world.
    assert summary.accuracy("new_chat", kept=True) == 0.0
    # Paraphrased questions do not find their facts by searching their own words.
    search, full = result(oracle_report, "search"), result(oracle_report, "full")
    assert search.accuracy(kept=True) < full.accuracy(kept=True)  # type: ignore[operator]
    cells = [r.accuracy(c, kept=True) for r in oracle_report.arms for c in ("single", "indirect", "temporal", "update")]
    assert any(v is not None and v < 1.0 for v in cells)


def test_plain_retrieval_is_given_the_tokens_the_default_style_took_with_each_oracle(oracle_report: CheckReport) -> None:
    def tokens(name: str, oracle: str = "reader") -> float:
        figure = result(oracle_report, name, oracle).tokens_per_turn()
        assert figure is not None
        return figure

    for oracle in ("reader", "writer"):
        given = search_settings(Settings(discover_servers=[]), oracle_report.arms, oracle, _scenario(), arm("search"))
        assert given.memory.recall_passages_tokens == round(tokens("summary+world", oracle) - tokens("window"))
        assert tokens("search", oracle) > tokens("window")  # it retrieved something
    # On this short story plain retrieval finds fewer matching messages than that budget holds.
    assert tokens("search") <= tokens("summary+world")
    assert [r.arm for r in oracle_report.arms if r.oracle == "reader"] == list(ARMS)  # shown in the order asked for


def test_without_the_default_style_plain_retrieval_fills_its_share_of_the_context() -> None:
    settings = Settings(discover_servers=[])
    given = search_settings(settings, [], "reader", _scenario(), arm("search")).updated(**arm("search").overrides)
    # as much as the default style's memory layers may take together
    assert given.memory.passages_budget(8192) == 8192 * settings.memory.memory_percent // 100 > 8192 // 10


def test_the_writer_oracle_that_does_not_know_the_answers_never_keeps_more(oracle_report: CheckReport) -> None:
    kept = {(name, kind): result(oracle_report, name, kind).accuracy(kept=True) for name in ("summary", "memos")
            for kind in ("reader", "writer")}
    # The writer, which must choose without the answers, never keeps more (on this short story it can keep as much:
    # tests/check/test_reader.py shows it keeps what tells no fact, which the reader leaves out).
    assert all(kept[name, "writer"] <= kept[name, "reader"] for name in ("summary", "memos")), kept  # type: ignore[operator]
    assert not [r for r in oracle_report.arms if r.oracle == "writer" and r.arm in ("window", "full")]


def test_no_character_knows_what_it_was_not_told_in_any_arm(oracle_report: CheckReport) -> None:
    for found in oracle_report.arms:
        before = [a for a in found.answers if a.question in ("own_chat", "invited", "away", "branch", "swipe")]
        assert len(before) == 5 and all(a.kept and a.correct for a in before), (found.arm, found.oracle, before)


runner = CliRunner()


def test_a_server_that_names_every_candidate_scores_at_most_10_percent(omoide_home: Path) -> None:
    scenario = _scenario()
    guesses = "? ".join(sorted(w.capitalize() for w in scenario.candidates)) + "? Honestly I don't know."
    with http_server({"POST /v1/chat/completions": chat_reply(guesses)}) as server:
        os.environ["OMOIDE_BASE_URL"] = address(server) + "/v1"
        os.environ["OMOIDE_MODEL"] = "guesser"
        try:
            out = runner.invoke(app, ["memory", "check", "--scenario", scenario.source.replace("shipped/", _shipped_dir()),
                                      "--arms", "window,summary", "--json"], catch_exceptions=False)
        finally:
            os.environ.pop("OMOIDE_BASE_URL")
            os.environ.pop("OMOIDE_MODEL")
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    answers = [a for r in data["arms"] if not r["floor"] for a in r["answers"]]  # the guesser's, not its floors'
    assert answers and sum(a["correct"] for a in answers) / len(answers) <= 0.10
    floors = {r["arm"]: r for r in data["arms"] if r["floor"]}
    assert set(floors) == {"declines", "frequent"} and floors["declines"]["figures"]["accuracy_knowable"] == 0.0
    window = next(r for r in data["arms"] if r["arm"] == "window")
    for category in ("single", "indirect", "update"):  # its guesses stand in the window: they are not evidence
        assert window["figures"]["kept"][category] == 0.0, category


def _shipped_dir() -> str:
    return str(Path(__file__).parents[2] / "src" / "omoide" / "check" / "scenarios") + "/"


def test_a_scenario_written_outside_the_project_runs_and_its_categories_show(omoide_home: Path, tmp_path: Path) -> None:
    path = _garden(tmp_path)
    out = runner.invoke(app, ["memory", "check", "--oracle", "--scenario", str(path), "--arms", "window,summary"],
                        catch_exceptions=False)
    assert out.exit_code == 0, out.output
    assert "reader oracle / writer oracle" in " ".join(out.output.split())
    rows = {line.split("│")[1].strip(): line for line in out.output.splitlines() if line.startswith("│")}
    assert {"single", "prefer", "abstain"} <= set(rows)
    assert "garden-club" in out.output
    summary_cells = [c.strip() for c in rows["single"].split("│")[1:-1]]
    assert summary_cells[1] == "1" and summary_cells[2] == "0" and summary_cells[3] == "100/100"  # n, window, summary


def test_the_progress_of_a_check_ends_at_its_last_turn(omoide_home: Path, tmp_path: Path) -> None:
    """Both oracles run the search (the writer too), so the progress counts it: it once read 112 %."""
    out = runner.invoke(app, ["memory", "check", "--oracle", "--scenario", str(_garden(tmp_path)),
                              "--arms", "window,search,summary"], catch_exceptions=False)
    assert out.exit_code == 0, out.output
    progress = re.findall(r"memory check (\d+)/(\d+) turns", out.output)
    assert progress and all(int(done) <= int(total) for done, total in progress), progress
    assert progress[-1][0] == progress[-1][1], progress
    assert out.output.count("%") and "100 %" in out.output and "112 %" not in out.output


def _garden(tmp_path: Path) -> Path:
    mine = {
        "format": 1, "name": "garden-club", "user": "Kai", "host": "suzune", "start": "2026-05-04T18:00",
        "facts": [{"id": "rose", "evidence": [["albertine"], ["rose"]]},
                  {"id": "hates", "evidence": [["slugs"], ["hate", "stand"]]}],
        "questions": [
            {"id": "rose", "category": "single", "ask": "Which climber did I plant by the shed?", "answer": "albertine",
             "needs": ["rose"]},
            {"id": "pests", "category": "preference", "ask": "What garden creature do I loathe?", "answer": "slugs",
             "needs": ["hates"]},
            {"id": "pond", "category": "abstention", "ask": "How deep is my pond?", "abstain": True},
        ],
        "events": [{"day": 1}, {"user": "I planted an Albertine rose by the shed today.", "fact": "rose"},
                   {"user": "I can't stand slugs, they ate all my lettuce.", "fact": "hates"}, {"pad": 12},
                   {"day": 3}, {"ask": "rose"}, {"ask": "pests"}, {"ask": "pond"}],
        "padding": ["The tomatoes are slow this year.", "It rained on the allotment again."],
    }
    path = tmp_path / "garden.json"
    path.write_text(json.dumps(mine))
    return path


def test_an_unknown_arm_or_oracle_is_named_with_the_ones_there_are(omoide_home: Path) -> None:
    out = runner.invoke(app, ["memory", "check", "--oracle", "--arms", "summary,telepathy"])
    assert out.exit_code == 1
    assert "telepathy" in out.output and "both+world" in out.output
    out = runner.invoke(app, ["memory", "check", "--oracle", "--oracles", "psychic"])
    assert out.exit_code == 1 and "reader, writer" in out.output


def test_a_small_context_shows_when_full_context_stops_fitting(omoide_home: Path) -> None:
    settings = Settings(context_size=1024, max_tokens=200, discover_servers=[])
    report = asyncio.run(run_check(settings, [OracleBackend("reader")], arms=[arm("full")], scenarios=[_scenario()]))
    full = report.arms[0]
    assert full.overflow_at is not None and full.overflow_at > 0
    assert full.accuracy(kept=True) is not None and full.accuracy(kept=True) < 1.0  # what no longer fit is lost


async def test_the_json_escapes_c1_controls_in_answers_and_the_model_name(
    omoide_home: Path, tmp_path: Path, fault_server  # type: ignore[no-untyped-def]
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
    story = tmp_path / "tiny.json"
    story.write_text(json.dumps({
        "format": 1, "name": "tiny", "facts": [{"id": "cat", "evidence": [["biscuit"], ["cat"]]}],
        "questions": [{"id": "cat", "category": "single", "ask": "What is my pet called?", "answer": "biscuit",
                       "needs": ["cat"]}],
        "events": [{"user": "My cat is Biscuit.", "fact": "cat"}, {"ask": "cat"}]}))
    env = {**os.environ, "OMOIDE_BASE_URL": fault_server.base_url, "OMOIDE_MODEL": f"model {hostile}",
           "OMOIDE_DISCOVER_SERVERS": "[]"}
    result = await asyncio.to_thread(
        subprocess.run, [sys.executable, "-m", "omoide.cli.app", "memory", "check", "--arms", "window", "--scenario", str(story), "--json"],
        capture_output=True, timeout=300, env=env,
    )
    assert result.returncode == 0, result.stderr.decode()[-2000:]
    for control in ("\x9b", "\x9d", "\x9c", "\x7f"):
        assert control.encode() not in result.stdout, control
    data = json.loads(result.stdout)
    assert data["model"] == f"model {hostile}"
    assert any(hostile in a["answer"] for a in data["arms"][0]["answers"])


def test_the_checks_throw_away_home_goes_to_memory_unless_tmpdir_says_or_it_is_too_small(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from omoide.check import runner

    monkeypatch.delenv("TMPDIR", raising=False)
    monkeypatch.setattr(runner, "SCRATCH", tmp_path)
    with runner.isolated_home() as home:
        assert home.parent == tmp_path and home.is_dir()
    monkeypatch.setattr(runner, "SCRATCH_FREE", 1 << 62)  # more than any disk has
    assert runner.scratch_dir() is None
    monkeypatch.setattr(runner, "SCRATCH_FREE", 0)
    monkeypatch.setenv("TMPDIR", str(tmp_path / "elsewhere"))
    assert runner.scratch_dir() is None
    monkeypatch.setattr(runner, "SCRATCH", tmp_path / "missing")
    monkeypatch.delenv("TMPDIR")
    assert runner.scratch_dir() is None
