"""`omoide characters ...`, driven through the sub-app with OMOIDE_HOME in a
temp directory (the autouse fixture in conftest sets it)."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from omoide import locations
from omoide.cli.characters import app
from omoide.characters.png import read_chunks, text_chunks

CARDS = Path(__file__).parents[1] / "data" / "cards"


def run(*args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "200"})


@pytest.fixture(autouse=True)
def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OMOIDE_HOME", str(tmp_path / "home"))


def test_list_shows_the_shipped_characters_and_where_they_come_from() -> None:
    result = run("list")
    assert result.exit_code == 0
    lines = {line.split("│")[1].strip(): line for line in result.stdout.splitlines() if line.count("│") >= 4}
    assert "bundled" in lines["suzune"] and "Suzune Aoki, 27, runs Tsuki no Shizuku" in lines["suzune"]
    assert "bundled" in lines["wren"]
    assert "{{char}}" not in result.stdout


def test_list_marks_imported_and_user_characters_and_reports_broken_folders() -> None:
    assert run("import", str(CARDS / "v2_orin.json")).exit_code == 0
    mine = locations.user_characters_dir() / "bo"
    mine.mkdir(parents=True)
    (mine / "character.toml").write_text('name = "Bo"\ndescription = "Mine."\n')
    broken = locations.user_characters_dir() / "broken"
    broken.mkdir()
    (broken / "character.toml").write_text("name = \n")
    result = run("list")
    assert result.exit_code == 0
    rows = {line.split("│")[1].strip(): line for line in result.stdout.splitlines() if line.count("│") >= 4}
    assert "imported" in rows["orin"] and "user" in rows["bo"] and "broken" not in rows
    assert "Skipped:" in result.stderr and "broken" in result.stderr and "not valid TOML" in result.stderr


def test_show_prints_the_card_without_the_macros_expanded_or_hidden() -> None:
    result = run("show", "Wren")
    assert result.exit_code == 0
    for text in ("Wren", "Description", "First message", "Example dialogue", "lighthouse", "bundled"):
        assert text in result.stdout
    lore = run("show", "suzune")
    assert "Lorebook" in lore.stdout and "The cat" in lore.stdout


def test_show_an_unknown_character_suggests_the_nearest() -> None:
    result = run("show", "wern")
    assert result.exit_code == 1
    assert "There is no character called 'wern'" in result.stderr and "Did you mean 'wren'" in result.stderr


def test_import_reports_each_file_and_fails_if_any_failed(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{nope")
    result = run("import", str(CARDS / "v2_orin.json"), str(bad), str(CARDS / "v3_sel.json"), str(tmp_path / "missing.png"))
    assert result.exit_code == 1
    assert "✓" in result.stdout and "orin" in result.stdout and "selene-marchetti" in result.stdout
    assert f"{bad}: the file holds invalid JSON at line 1" in result.stderr
    assert "missing.png" in result.stderr and "cannot be read" in result.stderr
    assert sorted(p.name for p in locations.user_characters_dir().iterdir()) == ["orin", "selene-marchetti"]
    assert run("import", str(CARDS / "v1_hana.json")).exit_code == 0


def test_export_json_gives_back_the_imported_card(tmp_path: Path) -> None:
    run("import", str(CARDS / "v3_sel.json"))
    target = tmp_path / "out" / "sel.json"
    target.parent.mkdir()
    result = run("export", "sel", "--format", "json", "--output", str(target))
    assert result.exit_code == 0 and f"Wrote {target}" in result.stdout
    assert json.loads(target.read_text()) == json.loads((CARDS / "v3_sel.json").read_text())


def test_export_png_writes_both_card_chunks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = run("export", "suzune")
    assert result.exit_code == 0
    texts = text_chunks(read_chunks((tmp_path / "suzune.png").read_bytes()))
    assert json.loads(base64.b64decode(texts["ccv3"]))["data"]["name"] == "Suzune"
    assert json.loads(base64.b64decode(texts["chara"]))["spec"] == "chara_card_v2"
    # The card and nothing else beside it (the data home, where the library index lives, is elsewhere).
    assert [p for p in tmp_path.iterdir() if p.name != "home"] == [tmp_path / "suzune.png"]


def test_export_errors_are_clear(tmp_path: Path) -> None:
    unknown = run("export", "nobody")
    assert unknown.exit_code == 1 and "There is no character called 'nobody'" in unknown.stderr
    bad_format = run("export", "wren", "--format", "gif")
    assert bad_format.exit_code == 2 and "gif" in bad_format.stderr
    nowhere = run("export", "wren", "--output", str(tmp_path / "no" / "such" / "dir.png"))
    assert nowhere.exit_code == 1 and "Cannot write" in nowhere.stderr


def _card(tmp_path: Path, file: str, name: str, description: str = "") -> Path:
    path = tmp_path / file
    path.write_text(json.dumps({"spec": "chara_card_v2", "spec_version": "2.0", "data": {"name": name, "description": description}}, ensure_ascii=False))
    return path


def test_japanese_chinese_and_cyrillic_names_keep_readable_ids(tmp_path: Path) -> None:
    for i, name in enumerate(["鈴音", "小龙", "Алиса", "Élise"]):
        assert run("import", str(_card(tmp_path, f"{i}.json", name))).exit_code == 0
    ids = sorted(p.name for p in locations.user_characters_dir().iterdir())
    assert ids == sorted(["鈴音", "小龙", "алиса", "elise"])
    shown = run("show", "鈴音")
    assert shown.exit_code == 0 and "鈴音" in shown.stdout


def test_an_ambiguous_name_says_which_character_it_resolved_to(tmp_path: Path) -> None:
    assert run("import", str(_card(tmp_path, "a.json", "Orin Vale", "the clockmaker"))).exit_code == 0
    assert run("import", str(_card(tmp_path, "b.json", "Orin Vale", "the ferry pilot"))).exit_code == 0
    result = run("show", "orin-vale-2")
    assert result.exit_code == 0 and "ferry pilot" in result.stdout and "is the name of" not in result.stderr
    result = run("show", "orin vale")
    assert result.exit_code == 0 and "clockmaker" in result.stdout
    assert "'orin vale' is the name of 2 characters (orin-vale, orin-vale-2); using orin-vale" in " ".join(result.stderr.split())
