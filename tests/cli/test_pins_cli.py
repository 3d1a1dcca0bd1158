"""`omoide pins CHARACTER`: list, --add and --remove, on a temp OMOIDE_HOME."""

from __future__ import annotations

from typer.testing import CliRunner

from omoide.cli.app import app

runner = CliRunner()


def run(*args: str):  # type: ignore[no-untyped-def]
    return runner.invoke(app, list(args), catch_exceptions=False)


def test_omoide_pins_adds_lists_and_removes_a_characters_pins() -> None:
    added = run("pins", "suzune", "--add", "Kai's cat is called \x1b[31mBiscuit.")
    assert added.exit_code == 0, added.output
    pin_id = int(added.stdout.split("#")[1].split()[0])
    listed = run("pins", "suzune").stdout
    assert f"#{pin_id}  Kai's cat is called" in listed and "\x1b" not in listed
    assert "Nothing is pinned for Wren" in run("pins", "wren").stdout
    assert run("pins", "suzune", "--add", "kai's cat is called \x1b[31mbiscuit.").exit_code == 1  # pinned already
    assert run("pins", "suzune", "--remove", str(pin_id)).exit_code == 0
    assert "Nothing is pinned" in run("pins", "suzune").stdout
    gone = run("pins", "suzune", "--remove", str(pin_id))
    assert gone.exit_code == 1 and "no pin" in gone.stderr
