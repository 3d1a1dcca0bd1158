"""Settings as a user meets them: the config file under OMOIDE_HOME (set per test
by tests/conftest.py), OMOIDE_* variables, keyword arguments, and the messages
that name what is wrong."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from omoide import locations
from omoide.config.settings import PLACES, Secret, Settings, SettingsError, config_warnings, load_settings
from omoide.errors import ConfigError


def write_config(text: str) -> Path:
    path = locations.config_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def value_of(settings: Settings, key: str) -> object:
    """The value of the setting whose id is `key`, from its section."""
    section, name = PLACES[key]
    return getattr(getattr(settings, section.NAME), name)


def problem(**kwargs: object) -> str:
    with pytest.raises(ConfigError) as info:
        load_settings(**kwargs)
    return info.value.message


def test_the_config_file_lives_under_omoide_home(omoide_home: Path) -> None:
    assert locations.config_file() == omoide_home / "config" / "config.toml"


def test_keywords_win_over_the_environment_over_the_file_over_the_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    write_config('temperature = 0.5\nuser_name = "Toml"\nmax_tokens = 100\nmodel = "from-file"\n')
    monkeypatch.setenv("OMOIDE_TEMPERATURE", "1.5")
    monkeypatch.setenv("OMOIDE_USER_NAME", "Env")
    settings = Settings(temperature=0.3)
    assert settings.backend.temperature == 0.3  # keyword over environment and file
    assert settings.user.name == "Env"  # environment over file
    assert settings.backend.max_tokens == 100 and settings.backend.model == "from-file"  # file over default
    assert settings.embedded.top_k == 40 and settings.backend.context_size == 8192  # defaults
    assert Settings().backend.temperature == 1.5


def test_variable_names_and_prefix_are_read_in_any_case(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("omoide_Top_K", "7")
    monkeypatch.setenv("Omoide_USER_NAME", "Kai")
    settings = Settings()
    assert settings.embedded.top_k == 7 and settings.user.name == "Kai"


@pytest.mark.parametrize(("name", "text", "expected"), [
    ("recall_tool", "yes", True), ("recall_tool", "On", True), ("recall_tool", "1", True), ("recall_tool", "TRUE", True),
    ("recall_tool", "no", False), ("recall_tool", "off", False), ("recall_tool", "0", False), ("recall_tool", "False", False),
    ("max_tokens", "300", 300),
    ("temperature", "1.25", 1.25),
    ("discover_timeout", "2", 2.0),
    ("discover_servers", '["http://127.0.0.1:5001", "http://10.0.0.2:8080"]', ["http://127.0.0.1:5001", "http://10.0.0.2:8080"]),
    ("discover_servers", "[]", []),
    ("keymap", '{"chat.diary": "f2"}', {"chat.diary": "f2"}),
    ("tools", "native", "native"),
    ("summary_backend", "anthropic", "anthropic"),
    ("summary_backend", "", None),
    ("seed", "", None),
    ("seed", "42", 42),
    ("model_path", "/models/mine.gguf", Path("/models/mine.gguf")),
    ("model_path", "", None),
    ("model", "", ""),  # a str field keeps the empty string
    ("user_persona", "", ""),
])
def test_environment_values_are_parsed_by_the_type_of_the_setting(
        monkeypatch: pytest.MonkeyPatch, name: str, text: str, expected: object) -> None:
    monkeypatch.setenv(f"OMOIDE_{name.upper()}", text)
    value = value_of(Settings(), name)
    assert value == expected and type(value) is type(expected)


@pytest.mark.parametrize(("name", "text", "message"), [
    ("recall_tool", "maybe", "[memory] recall_tool (OMOIDE_RECALL_TOOL): 'maybe' is not true or false (use true/false, 1/0, yes/no or on/off)"),
    ("max_tokens", "lots", "[backend] max_tokens (OMOIDE_MAX_TOKENS): 'lots' is not a whole number"),
    ("max_tokens", "2.5", "[backend] max_tokens (OMOIDE_MAX_TOKENS): '2.5' is not a whole number"),
    ("temperature", "warm", "[backend] temperature (OMOIDE_TEMPERATURE): 'warm' is not a number"),
    ("temperature", "nan", "[backend] temperature (OMOIDE_TEMPERATURE): nan is not a finite number"),
    ("discover_servers", "http://127.0.0.1:5001", "[models] discover_servers (OMOIDE_DISCOVER_SERVERS): 'http://127.0.0.1:5001' is not valid JSON"),
    ("discover_servers", '[1, 2]', "[models] discover_servers (OMOIDE_DISCOVER_SERVERS): [1, 2] is not a list of strings"),
    ("keymap", '["f2"]', "[ui] keymap (OMOIDE_KEYMAP): ['f2'] is not a table of strings"),
    ("tools", "x", "[backend] tools (OMOIDE_TOOLS): 'x' is not one of auto, native, inline"),
    ("synchronous", "normal", "[store] synchronous (OMOIDE_SYNCHRONOUS): 'normal' is not one of NORMAL, FULL"),
])
def test_a_bad_environment_value_is_named_with_what_is_allowed(
        monkeypatch: pytest.MonkeyPatch, name: str, text: str, message: str) -> None:
    monkeypatch.setenv(f"OMOIDE_{name.upper()}", text)
    assert message in problem()


@pytest.mark.parametrize(("line", "message"), [
    ("temperature = 3.0", "[backend] temperature: 3.0 is above the maximum 2.0 — it must be at least 0.0 and at most 2.0"),
    ("temperature = -0.5", "[backend] temperature: -0.5 is below the minimum 0.0 — it must be at least 0.0 and at most 2.0"),
    ("context_size = 100", "[backend] context_size: 100 is below the minimum 512"),
    ("discover_timeout = 0", "[models] discover_timeout: 0.0 is not above 0"),
    ("min_p = 1.0", "[embedded] min_p: 1.0 is not below 1.0 — it must be at least 0.0 and below 1.0"),
    ("world_familiarity_gain = 0", "[world] familiarity_gain: 0.0 is not above 0 — it must be above 0 and below 1"),
    ("lore_budget_percent = 101", "[memory] lore_budget_percent: 101 is above the maximum 100 — it must be at least 1 and at most 100"),
    ("max_tokens = 1.5", "[backend] max_tokens: 1.5 is not a whole number"),
    ("max_tokens = true", "[backend] max_tokens: True is not a whole number"),  # a bool is not a number
    ("recall_tool = 1", "[memory] recall_tool: 1 is not true or false"),
    ("user_name = 7", "[user] name: 7 is not a string"),
    ('discover_servers = ["http://a:1", 2]', "[models] discover_servers: ['http://a:1', 2] is not a list of strings"),
    ('keymap = {"chat.diary" = 2}', "[ui] keymap: {'chat.diary': 2} is not a table of strings"),
    ("model_path = 3", "[embedded] model_path: expected a string, not int"),
    ('tools = "x"', "[backend] tools: 'x' is not one of auto, native, inline"),
])
def test_a_bad_value_in_the_config_file_is_named_with_what_is_allowed(
        monkeypatch: pytest.MonkeyPatch, line: str, message: str) -> None:
    for name in ("OMOIDE_DISCOVER_SERVERS", "OMOIDE_DISCOVER_TIMEOUT"):  # set by conftest; they would win over the file
        monkeypatch.delenv(name)
    path = write_config(line + "\n")
    with pytest.raises(ConfigError) as info:
        load_settings()
    assert info.value.message == f"The settings are not valid ({message})."
    assert info.value.hint == f"Fix {path} or the OMOIDE_* environment variables."


def test_numbers_and_switches_written_as_text_in_the_config_file_are_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """pydantic read `temperature = "0.8"`; a config file that worked keeps working."""
    for name in ("OMOIDE_DISCOVER_SERVERS", "OMOIDE_DISCOVER_TIMEOUT"):
        monkeypatch.delenv(name)
    write_config('temperature = "0.5"\nmax_tokens = "300"\nrecall_tool = "yes"\ncontext_size = 4096.0\n')
    settings = load_settings()
    assert (settings.backend.temperature, settings.backend.max_tokens, settings.memory.recall_tool, settings.backend.context_size) == (0.5, 300, True, 4096)
    write_config('temperature = "9"\n')
    with pytest.raises(ConfigError, match=r"\[backend\] temperature: 9.0 is above the maximum 2.0"):
        load_settings()


def test_keyword_values_are_checked_like_the_file(monkeypatch: pytest.MonkeyPatch) -> None:
    assert Settings(temperature=1).backend.temperature == 1.0 and type(Settings(temperature=1).backend.temperature) is float
    assert Settings(model_path="a.gguf").embedded.model_path == Path("a.gguf")
    assert "[backend] top_p: 0.0 is not above 0.0" in problem(top_p=0.0)
    assert "[memory] memo_batch: 1 is below the minimum 2" in problem(memo_batch=1)
    assert "[user] name: a value is required" in problem(user_name=None)


def test_every_problem_is_reported_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    write_config("temperature = 3.0\ncontext_size = 'lots'\ntools = 'x'\n")
    monkeypatch.setenv("OMOIDE_MAX_RETRIES", "-1")
    with pytest.raises(SettingsError) as info:
        Settings(memo_batch=0)
    assert info.value.problems == [
        "[backend] tools: 'x' is not one of auto, native, inline",
        "[backend] temperature: 3.0 is above the maximum 2.0 — it must be at least 0.0 and at most 2.0",
        "[backend] context_size: 'lots' is not a whole number",
        "[backend] max_retries (OMOIDE_MAX_RETRIES): -1 is below the minimum 0",
        "[memory] memo_batch: 0 is below the minimum 2",
    ]
    assert isinstance(info.value, ValueError)
    message = problem(memo_batch=0)
    assert message.startswith("The settings are not valid ([backend] tools: ") and "; [memory] memo_batch: 0 is below the minimum 2)." in message


def test_a_config_file_with_broken_syntax_keeps_its_message() -> None:
    path = write_config("temperature = = 1\n")
    with pytest.raises(ConfigError) as info:
        load_settings()
    assert info.value.message.startswith(f"Cannot read the config file {path}: ")
    assert "TOML syntax" in info.value.hint


def test_a_missing_config_file_means_the_defaults() -> None:
    assert not locations.config_file().exists()
    settings = load_settings()
    assert settings.backend.temperature == 0.8 and settings.backend.kind == "auto" and settings.user.personas == {}


def test_the_api_key_never_shows_in_repr_or_str(monkeypatch: pytest.MonkeyPatch) -> None:
    write_config('summary_api_key = "sk-file-secret"\n')
    monkeypatch.setenv("OMOIDE_API_KEY", "sk-env-secret")
    settings = Settings()
    for text in (repr(settings), str(settings), repr(settings.summarizer_settings()), f"{settings.backend.api_key}"):
        assert "secret" not in text
    assert "**********" in repr(settings) and str(settings.backend.api_key) == "**********"
    assert repr(settings.backend.api_key) == "Secret('**********')"
    assert settings.backend.api_key is not None and settings.backend.api_key.get_secret_value() == "sk-env-secret"
    assert settings.summarizer.api_key == Secret("sk-file-secret") != Secret("other")
    assert Settings(api_key=Secret("k")).backend.api_key == Settings(api_key="k").backend.api_key


def test_a_wrong_api_key_type_is_named_without_showing_the_value() -> None:
    write_config("api_key = 123456789\n")
    message = problem()
    assert "[backend] api_key: expected a string, not int" in message and "123456789" not in message


def test_an_empty_api_key_variable_means_no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OMOIDE_API_KEY", "")
    assert Settings().backend.api_key is None


def test_unknown_keys_are_ignored_and_the_file_ones_are_warned_about(monkeypatch: pytest.MonkeyPatch) -> None:
    write_config('temprature = 0.5\nuser_name = "Kai"\n')
    monkeypatch.setenv("OMOIDE_FROBNICATE", "1")
    settings = Settings(frobnicate=2)
    assert settings.user.name == "Kai" and settings.backend.temperature == 0.8 and not hasattr(settings, "frobnicate")
    path = locations.config_file()
    assert config_warnings() == [f"Unknown setting 'temprature' in {path} is ignored. Did you mean 'temperature'?",
                                 f"'user_name' at the top of {path} is read; its place is now [user] name."]


@pytest.mark.parametrize("url", ["ftp://example.com/v1", "127.0.0.1:8080", "http://"])
def test_a_base_url_that_is_not_an_http_url_is_rejected(url: str) -> None:
    assert f"[backend] base_url: '{url}' is not" in problem(base_url=url)
    write_config(f'summary_base_url = "{url}"\n')
    assert f"[summarizer] base_url: '{url}' is not" in problem()


def test_a_base_url_loses_its_trailing_slash(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OMOIDE_BASE_URL", " http://127.0.0.1:8080/v1/ ")
    settings = Settings()
    assert settings.backend.base_url == "http://127.0.0.1:8080/v1" and settings.backend.resolved == "openai"


def test_updated_checks_the_changes_and_reads_nothing_again(monkeypatch: pytest.MonkeyPatch) -> None:
    base = Settings(user_name="Kai")
    monkeypatch.setenv("OMOIDE_TEMPERATURE", "1.9")
    write_config("top_k = 3\n")
    copy = base.updated(max_tokens=50, base_url="http://127.0.0.1:9/v1/")
    assert copy.backend.max_tokens == 50 and copy.backend.base_url == "http://127.0.0.1:9/v1"
    assert copy.backend.temperature == 0.8 and copy.embedded.top_k == 40 and copy.user.name == "Kai"  # not re-read
    assert base.backend.max_tokens == 400 and base.backend.base_url is None  # the original is unchanged
    with pytest.raises(SettingsError) as info:
        base.updated(max_tokens=0, tools="x", no_such_setting=1)
    assert info.value.problems == ["[backend] max_tokens: 0 is below the minimum 1", "[backend] tools: 'x' is not one of auto, native, inline",
                                   "no_such_setting: there is no setting with this name"]


def test_summarizer_takes_the_summary_overrides() -> None:
    settings = Settings(base_url="http://a:1/v1", model="big", api_key="k1",
                        summary_base_url="http://b:2/v1", summary_model="small", summary_api_key="k2")
    summarizer = settings.summarizer_settings()
    assert (summarizer.backend.base_url, summarizer.backend.model, summarizer.backend.api_key) == ("http://b:2/v1", "small", Secret("k2"))
    assert settings.backend.model == "big"  # the chat's own are unchanged
    assert Settings().summarizer_settings() == Settings()


def test_is_set_tells_a_given_value_from_a_default(monkeypatch: pytest.MonkeyPatch) -> None:
    write_config("top_k = 3\n")
    monkeypatch.setenv("OMOIDE_SEED", "5")
    settings = Settings(max_tokens=400)
    assert settings.is_set("max_tokens") and settings.is_set("seed") and settings.is_set("top_k")
    assert not settings.is_set("temperature") and not settings.is_set("no_such_setting")
    assert settings.updated(temperature=0.8).is_set("temperature")


def test_list_and_dict_defaults_are_not_shared_and_settings_can_be_changed() -> None:
    first, second = Settings(), Settings()
    first.user.personas["bard"] = "A singer."
    first.ui.keymap["chat.diary"] = "f2"
    assert second.user.personas == {} and second.ui.keymap == {} and Settings().user.personas == {}
    second.user.name = "Kai"
    assert second.user.name == "Kai"


def test_ids_list_every_setting_in_order() -> None:
    names = Settings.ids()
    assert names[0] == "backend" and names[-1] == "synchronous"
    assert {"api_key", "temperature", "keymap", "personas"} <= set(names) and len(names) == len(set(names))


def test_reading_the_settings_does_not_import_pydantic() -> None:
    code = "import sys, omoide.config.settings; omoide.config.settings.Settings(); print('pydantic' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.stdout.strip() == "False", result.stderr


def test_a_file_in_sections_is_read_section_by_section(monkeypatch: pytest.MonkeyPatch) -> None:
    write_config(
        '[backend]\nkind = "openai"\nbase_url = "http://127.0.0.1:8080/v1"\ntemperature = 0.4\n'
        '[memory]\nstyle = "memos"\nsummary_threshold = 30\n'
        '[world]\nrolling = 5\n'
        '[user]\nname = "Kai"\n[user.personas]\nbard = "A singer."\n'
        '[ui.keymap]\n"chat.diary" = "f2"\n'
    )
    settings = load_settings()
    assert (settings.backend.kind, settings.backend.base_url, settings.backend.temperature) == ("openai", "http://127.0.0.1:8080/v1", 0.4)
    assert (settings.memory.style, settings.memory.summary_threshold, settings.world.rolling) == ("memos", 30, 5)
    assert settings.user.name == "Kai" and settings.user.personas == {"bard": "A singer."}
    assert settings.ui.keymap == {"chat.diary": "f2"}
    assert config_warnings() == []
    monkeypatch.setenv("OMOIDE_SUMMARY_THRESHOLD", "40")  # the variables keep their names
    monkeypatch.setenv("OMOIDE_MEMORY_STYLE", "both")
    assert (Settings().memory.summary_threshold, Settings().memory.style) == (40, "both")


def test_a_flat_file_from_before_the_sections_still_works_and_each_key_names_its_new_place() -> None:
    path = write_config('backend = "openai"\nbase_url = "http://127.0.0.1:8080/v1"\nmemory_style = "memos"\n'
                        'world_rolling = 5\nuser_name = "Kai"\n[personas]\nbard = "A singer."\n')
    settings = load_settings()
    assert (settings.backend.kind, settings.memory.style, settings.world.rolling, settings.user.name) == ("openai", "memos", 5, "Kai")
    assert settings.user.personas == {"bard": "A singer."}
    assert config_warnings() == [
        f"'backend' at the top of {path} is read; its place is now [backend] kind.",
        f"'base_url' at the top of {path} is read; its place is now [backend] base_url.",
        f"'memory_style' at the top of {path} is read; its place is now [memory] style.",
        f"'world_rolling' at the top of {path} is read; its place is now [world] rolling.",
        f"'user_name' at the top of {path} is read; its place is now [user] name.",
        f"'personas' at the top of {path} is read; its place is now [user] personas.",
    ]


def test_a_section_wins_over_the_same_setting_at_the_top_and_unknown_keys_in_a_section_are_named() -> None:
    path = write_config('user_name = "Old"\n[user]\nname = "New"\nnmae = "typo"\n')
    assert load_settings().user.name == "New"
    assert f"Unknown setting 'nmae' in [user] of {path} is ignored. Did you mean 'name'?" in config_warnings()
    write_config('[memory]\nsummary_threshold = 2\n')
    assert "[memory] summary_threshold: 2 is below the minimum 3" in problem()


def test_docs_configuration_names_every_setting_with_its_variable() -> None:
    doc = (Path(__file__).parents[2] / "docs" / "configuration.md").read_text(encoding="utf-8")
    missing = [key for key, (section, name) in PLACES.items()
               if f"### [{section.NAME}]" not in doc or f"| `{name}` |" not in doc or f"`OMOIDE_{key.upper()}`" not in doc]
    assert not missing, f"docs/configuration.md lacks {missing}: python docs/settings_table.py prints the tables"
