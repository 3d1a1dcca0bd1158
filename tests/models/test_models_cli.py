"""`omoide models`, `omoide models use` and the config file they write."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from omoide import locations
from omoide.cli.app import app
from omoide.config.settings import load_settings
from omoide.config.file import update_config
from omoide.errors import ConfigError
from tests.fakeservers import address, http_server, ollama, openai_models

runner = CliRunner()

USER_CONFIG = '''# my settings
user_name = "Kai"   # that's me
temperature = 0.7
base_url = "http://old.example/v1"

[personas]
Ren = "A courier."
'''


def write_config(text: str) -> Path:
    path = locations.config_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_setting_keys_keeps_comments_tables_and_the_other_settings() -> None:
    path = write_config(USER_CONFIG)
    update_config({"backend": "openai", "base_url": "http://127.0.0.1:11434/v1", "model_path": None})
    text = path.read_text()
    assert text.startswith("# my settings\nuser_name = \"Kai\"   # that's me\n")
    assert text.endswith('[backend]\nkind = "openai"\nbase_url = "http://127.0.0.1:11434/v1"\n') and "old.example" not in text
    data = tomllib.loads(text)
    assert data == {"user_name": "Kai", "temperature": 0.7, "personas": {"Ren": "A courier."},
                    "backend": {"kind": "openai", "base_url": "http://127.0.0.1:11434/v1"}}
    assert load_settings().backend.base_url == "http://127.0.0.1:11434/v1"


def test_a_setting_goes_into_its_section_in_place_keeping_the_tables_around_it() -> None:
    path = write_config('[backend]\nmodel = "old"  # mine\ntemperature = 0.7\n\n[user]\nname = "Kai"\n')
    update_config({"model": "qwen", "local_model": "gemma-3-270m", "base_url": None})
    assert path.read_text() == ('[backend]\nmodel = "qwen"\ntemperature = 0.7\n\n[user]\nname = "Kai"\n\n'
                                '[embedded]\nmodel = "gemma-3-270m"\n')


def test_a_value_spanning_lines_is_left_alone_with_what_to_write() -> None:
    original = 'model = """\nllama3\n"""\n'
    path = write_config(original)
    with pytest.raises(ConfigError) as info:
        update_config({"model": "qwen"})
    assert path.read_text() == original
    assert 'model = "qwen"' in info.value.hint


def test_a_broken_config_is_never_rewritten() -> None:
    path = write_config("user_name = \n")
    with pytest.raises(ConfigError):
        update_config({"backend": "local"})
    assert path.read_text() == "user_name = \n"


def test_models_lists_embedded_downloaded_and_discovered_with_the_default_marked(monkeypatch: pytest.MonkeyPatch) -> None:
    with http_server(ollama("llama3.1:8b")) as olla, http_server(openai_models("Stheno-8B", owned_by="koboldcpp")) as kobold:
        monkeypatch.setenv("OMOIDE_DISCOVER_SERVERS", f'["{address(olla)}", "{address(kobold)}"]')
        result = runner.invoke(app, ["models"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    row = next(line for line in lines if "smollm2-135m" in line)
    assert "●" in row and "embedded" in row
    assert any("llama3.1:8b" in line and "Ollama at " + address(olla) in line for line in lines)
    assert any("Stheno-8B" in line and "KoboldCpp" in line for line in lines)
    assert "qwen2.5-1.5b" in result.stdout and "Apache-2.0" in result.stdout  # the recommended downloads


def test_use_a_server_model_writes_the_config_and_the_next_run_uses_it(monkeypatch: pytest.MonkeyPatch) -> None:
    write_config(USER_CONFIG)
    with http_server(ollama("llama3.1:8b")) as olla:
        monkeypatch.setenv("OMOIDE_DISCOVER_SERVERS", f'["{address(olla)}"]')
        result = runner.invoke(app, ["models", "use", "llama3.1:8b"])
        assert result.exit_code == 0, result.output
        settings = load_settings()
        assert (settings.backend.resolved, settings.backend.base_url, settings.backend.model) == ("openai", address(olla) + "/v1", "llama3.1:8b")
        assert settings.user.name == "Kai" and settings.user.personas == {"Ren": "A courier."}
        listed = runner.invoke(app, ["models"], env={"COLUMNS": "200"})
    row = next(line for line in listed.stdout.splitlines() if "llama3.1:8b" in line)
    assert "●" in row


def test_use_an_embedded_model_and_an_unknown_name(monkeypatch: pytest.MonkeyPatch) -> None:
    write_config('base_url = "http://127.0.0.1:11434/v1"\nmodel_path = "/x/y.gguf"\n')
    result = runner.invoke(app, ["models", "use", "smollm2-135m"])
    assert result.exit_code == 0, result.output
    settings = load_settings()
    assert (settings.backend.resolved, settings.embedded.model, settings.embedded.model_path) == ("local", "smollm2-135m", None)
    assert settings.backend.base_url == "http://127.0.0.1:11434/v1"  # kept, for switching back
    bad = runner.invoke(app, ["models", "use", "gpt-17"])
    assert bad.exit_code == 1 and "There is no model called 'gpt-17'" in bad.stderr and "smollm2-135m" in bad.stderr


def test_use_a_model_on_a_server_named_by_address() -> None:
    with http_server(openai_models("gemma-3-4b")) as server:
        result = runner.invoke(app, ["models", "use", "gemma-3-4b", "--server", address(server)])
    assert result.exit_code == 0, result.output
    assert load_settings().backend.base_url == address(server) + "/v1"


def test_doctor_lists_running_servers(monkeypatch: pytest.MonkeyPatch) -> None:
    with http_server(ollama("llama3.1:8b", "qwen2.5:7b")) as olla:
        monkeypatch.setenv("OMOIDE_DISCOVER_SERVERS", f'["{address(olla)}"]')
        monkeypatch.setenv("OMOIDE_BASE_URL", address(olla) + "/v1")  # keeps doctor off the embedded model
        result = runner.invoke(app, ["doctor"], env={"COLUMNS": "200"})
    assert f"server: Ollama at {address(olla)}/v1 (2 models: llama3.1:8b, qwen2.5:7b)" in result.stdout


def test_models_lists_the_server_set_in_omoide_base_url_and_marks_it_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 42: with OMOIDE_BASE_URL set, `omoide doctor` had it answering while
    `omoide models` marked no default and said no server answered."""
    with http_server(openai_models("mistral-small", "qwen3-8b")) as server:
        monkeypatch.setenv("OMOIDE_BASE_URL", address(server) + "/v1")
        monkeypatch.setenv("OMOIDE_MODEL", "qwen3-8b")
        result = runner.invoke(app, ["models"], env={"COLUMNS": "200"})
        assert result.exit_code == 0, result.output
        lines = result.stdout.splitlines()
        chosen = next(line for line in lines if "qwen3-8b" in line)
        assert "●" in chosen and address(server) in chosen
        assert any("mistral-small" in line and "●" not in line for line in lines)
        assert "●" not in next(line for line in lines if "smollm2-135m" in line)
        assert "No model server answered" not in result.stdout
        monkeypatch.setenv("OMOIDE_DISCOVER_SERVERS", f'["{address(server)}"]')  # found here too: listed once
        again = runner.invoke(app, ["models"], env={"COLUMNS": "200"})
    assert again.exit_code == 0, again.output
    assert sum("qwen3-8b" in line for line in again.stdout.splitlines()) == 1


def test_models_says_when_the_server_in_omoide_base_url_does_not_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.fakeservers import closed_port

    monkeypatch.setenv("OMOIDE_BASE_URL", closed_port() + "/v1")
    result = runner.invoke(app, ["models"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "The server in base_url" in result.stdout and "did not list its models" in result.stdout
