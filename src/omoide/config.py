"""Settings: built-in defaults, then the TOML file, then OMOIDE_* environment
variables, then keyword arguments (highest). The API key is read from here and
nowhere else; it is never written to the database, the logs or an export.

Standard library only (no pydantic): every launch of omoide imports this."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Literal

from omoide import locations
from omoide.errors import ConfigError
from omoide.settings_fields import Range, SettingsError, fields_of, from_environment, read_toml

__all__ = ["BackendKind", "Range", "Secret", "Settings", "SettingsError", "config_warnings", "load_settings"]

BackendKind = Literal["auto", "local", "openai", "anthropic"]


class Secret:
    """A secret string (an API key): shown as stars in repr and str, so it
    cannot leak through a log line or a printed Settings."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def get_secret_value(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "Secret('**********')"

    def __str__(self) -> str:
        return "**********"

    def __bool__(self) -> bool:
        return bool(self._value)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(self._value)


def _url(value: str) -> str:
    """An http(s) URL with a host, without its trailing slash ("" stays "")."""
    if not value:
        return value
    import httpx

    try:
        url = httpx.URL(value.strip())
    except (httpx.InvalidURL, ValueError, TypeError) as exc:
        raise ValueError(f"'{value}' is not a URL ({exc})") from exc
    if url.scheme not in ("http", "https") or not url.host:
        raise ValueError(f"'{value}' is not an http(s) URL with a host, such as http://127.0.0.1:11434/v1")
    return value.strip().rstrip("/")


class Settings:
    """Every setting is an annotated class attribute: its type (with its checks
    in Annotated), its default, and its docstring. `Settings(**overrides)` reads,
    highest first: the keyword arguments, OMOIDE_* variables, the config file,
    the defaults; unknown keys are ignored, and every problem is raised at once
    as a SettingsError."""

    backend: BackendKind = "auto"
    """'local' runs the embedded SmolLM2 in-process; 'openai' talks to any
    OpenAI-compatible server; 'anthropic' to the Messages API. 'auto' picks
    'openai' when base_url is set, else 'local'."""
    base_url: Annotated[str | None, _url] = None
    """e.g. http://127.0.0.1:11434/v1 for Ollama, http://127.0.0.1:8080/v1 for llama.cpp."""
    model: str | None = None
    """The model name sent to the server. Empty for the local backend."""
    api_key: Secret | None = None
    """From OMOIDE_API_KEY or the config file. Never stored anywhere else."""
    model_path: Path | None = None
    """A GGUF file of your own for the local backend (overrides local_model)."""
    local_model: str | None = None
    """The local backend's model by name: an embedded one (smollm2-135m, gemma-3-270m)
    or a file `omoide models pull` downloaded. Default: the default embedded model."""
    discover_servers: list[str] | None = None
    """Addresses probed for model servers at first run, in `omoide models` and in
    `omoide doctor`. Default: the usual local ports of Ollama, llama.cpp, LM Studio,
    KoboldCpp, vLLM, SGLang and text-generation-webui; [] turns discovery off."""
    discover_timeout: Annotated[float, Range(gt=0)] = 0.5
    """Seconds a server may take to list its models before discovery moves on."""
    tools: Literal["auto", "native", "inline"] = "auto"
    """How save_memory is offered: native tool calls, an inline tag, or auto-detect."""

    temperature: Annotated[float, Range(ge=0.0, le=2.0)] = 0.8
    top_p: Annotated[float, Range(gt=0.0, le=1.0)] = 0.95
    max_tokens: Annotated[int, Range(ge=1)] = 400
    """Longest reply, in tokens. The embedded models stop at 200 unless this is set."""
    min_p: Annotated[float, Range(ge=0.0, lt=1.0)] = 0.1
    """Embedded model: drop tokens less likely than this share of the likeliest."""
    top_k: Annotated[int, Range(ge=0)] = 40
    """Embedded model: sample among this many likeliest tokens (0: all)."""
    repeat_penalty: Annotated[float, Range(ge=1.0, le=2.0)] = 1.1
    """Embedded model: penalty on tokens seen in the last 64 (1.0: none)."""
    frequency_penalty: Annotated[float, Range(ge=0.0, le=2.0)] = 0.3
    """Embedded model: penalty growing with how often a token already appears in the reply."""
    presence_penalty: Annotated[float, Range(ge=0.0, le=2.0)] = 0.2
    """Embedded model: penalty on any token already in the reply."""
    embedded_prompt: Literal["auto", "script", "chat"] = "auto"
    """Embedded model: a chat reply is the next line of a play script it continues
    ("script") or a turn through its chat template ("chat"). "auto": the script for
    SmolLM2, which through its template answers like an assistant; Gemma's turn
    format for the Gemma 3 270M base model, which leaves half its script lines
    empty (benchmarks/first_chat.py)."""
    seed: int | None = None
    """Embedded model: a fixed seed makes its replies repeatable (benchmarks use it)."""
    context_size: Annotated[int, Range(ge=512)] = 8192
    """The model's context window; the prompt is trimmed to fit with room for the reply."""
    threads: int | None = None
    """Embedded engine: threads that generate the reply (default: chosen from
    measurement, see docs/engine.md)."""
    batch_threads: int | None = None
    """Embedded engine: threads that evaluate the prompt (default: all cores)."""
    engine_slots: Annotated[int, Range(ge=1, le=16)] = 4
    """Embedded engine: cache slots, one per speaker of a group scene and one for
    memory work (each keeps its prompt cached; each costs a context's worth of
    memory, see docs/engine.md)."""

    request_timeout: Annotated[float, Range(gt=0)] = 60.0
    """Seconds to wait for the first byte of a reply."""
    stall_timeout: Annotated[float, Range(gt=0)] = 30.0
    """Seconds without a byte, mid-stream, before the reply is given up as stalled."""
    memory_timeout: Annotated[float, Range(gt=0)] = 180.0
    """Seconds a background memory call (summary, diary compression) may run before it is given up."""
    max_retries: Annotated[int, Range(ge=0)] = 3
    """Retries on 408/409/429/5xx, only before the first byte arrives."""

    summary_backend: BackendKind | None = None
    """A separate (cheaper) backend for compression; defaults to the chat backend."""
    summary_base_url: Annotated[str | None, _url] = None
    summary_model: str | None = None
    summary_api_key: Secret | None = None

    recent_messages: Annotated[int, Range(ge=2)] = 15
    """Messages always sent verbatim (tier 1)."""
    summary_threshold: Annotated[int, Range(ge=3)] = 20
    """Uncovered messages on the path that trigger compression into the summary."""
    summary_merge_chars: Annotated[int, Range(ge=0)] = 6000
    """Each compression appends a paragraph to the running summary (the earlier text
    stays byte for byte, so prompt caches keep it) until the summary is this long;
    the next compression then rewrites it into one. 0: rewrite every time."""
    diary_prompt_lines: Annotated[int, Range(ge=1)] = 50
    """Diary lines injected into every prompt."""
    diary_compress_lines: Annotated[int, Range(ge=2)] = 50
    """Diary length, in lines, past which the diary is compressed."""
    lore_budget_percent: Annotated[int, Range(ge=1, le=100)] = 25
    """Share of the context that triggered lore may take, for lorebooks that set no
    `token_budget` (SillyTavern's world info budget works the same way)."""

    memory_style: Literal["summary", "memos", "both"] = "summary"
    """'summary': the running summary (seed 002, the default). 'memos': the memo book
    instead (seed 003: the last memo_recent_messages raw, plus memos). 'both': the
    summary and the memos."""
    memo_batch: Annotated[int, Range(ge=2)] = 8
    """Messages per memo: every full batch on the path gets one, in the background."""
    memo_prompt_count: Annotated[int, Range(ge=0)] = 15
    """The most memos in the prompt (the newest ones before the raw window)."""
    memo_roll_step: Annotated[int, Range(ge=1)] = 5
    """Old memos leave the prompt this many at a time, so the prompt's memo layer
    changes less often (1: one at a time, as the seed does)."""
    memo_recent_messages: Annotated[int, Range(ge=2)] = 16
    """In the 'memos' style, at least this many messages are sent raw (8 pairs)."""
    diary_selection: Literal["recent", "weighted"] = "recent"
    """Which diary lines enter the prompt when there are more than diary_prompt_lines:
    'recent' keeps the last ones; 'weighted' the strongest entries (importance,
    decay, mentions), shown in date order."""
    memory_half_life_days: Annotated[float, Range(gt=0)] = 30.0
    """Days after which a memory's weight has halved (mentions raise it again)."""
    recall_tool: bool = False
    """Offer the character a recall tool that searches the whole story (off: characters
    that can search tend to replay old scenes)."""
    profile_learning: Literal["ask", "auto", "off"] = "ask"
    """What happens to a fact a character learns about you: proposed for you to
    accept (ask), added at once (auto), or ignored (off)."""
    world_rolling: Annotated[int, Range(ge=1)] = 10
    """Conversation summaries (and offscreen notes) each rolling list keeps."""
    world_idle_hours: Annotated[float, Range(ge=0)] = 3.0
    """A chat idle this long ends its conversation on its own (0: only /end does)."""
    world_min_messages: Annotated[int, Range(ge=1)] = 4
    """New messages a conversation needs before idleness ends it."""
    world_familiarity_gain: Annotated[float, Range(gt=0, lt=1)] = 0.15
    """Share of the gap to full familiarity closed by one shared conversation."""
    world_familiarity_decay: Annotated[float, Range(ge=0, lt=1)] = 0.03
    """Share of familiarity lost for every conversation without the other."""
    world_max_tokens: Annotated[int, Range(ge=8)] = 350
    """The longest answer of one end-of-conversation step (the steps ask for less where less is enough)."""
    world_transcript_chars: Annotated[int, Range(ge=500)] = 6000
    """The most of a conversation's text (its end) that each end-of-conversation step reads."""
    gossip_rate: Annotated[float, Range(ge=0, le=1)] = 0.3
    """Chance, at the start of a conversation, that an absent character becomes its gossip target."""
    scene_seed: int | None = None
    """Seed of the random source that picks who speaks next in a scene (None: a fresh one each time)."""

    user_name: str = "You"
    """Your name, used for {{user}}."""
    user_persona: str = ""
    """What the character knows about you from the start."""
    personas: dict[str, str] = {}  # each Settings gets its own copy of a list or dict default
    """More personas to switch to with /persona NAME: name -> description."""

    keymap: dict[str, str] = {}
    """Remap keys in the chat by binding id, e.g. {"chat.diary" = "f2", "chat.prompt" = "f3"}."""

    synchronous: Literal["NORMAL", "FULL"] = "NORMAL"
    """SQLite durability: FULL survives power loss at some speed cost."""

    def __init__(self, **overrides: object) -> None:
        fields = fields_of(type(self))
        environment = from_environment(os.environ, "OMOIDE_")
        config = read_toml(locations.config_file())
        problems: list[str] = []
        given: set[str] = set()
        for name, field in fields.items():
            try:
                if name in overrides:
                    value = field.check(overrides[name])
                elif name in environment:
                    value = field.parse(environment[name])
                elif name in config:
                    value = field.check(config[name])
                else:
                    setattr(self, name, field.fresh_default())
                    continue
            except ValueError as exc:
                source = f" (OMOIDE_{name.upper()})" if name not in overrides and name in environment else ""
                problems.append(f"{name}{source}: {exc}")
                continue
            given.add(name)
            setattr(self, name, value)
        if problems:
            raise SettingsError(problems)
        self._given: frozenset[str] = frozenset(given)

    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        """Every setting's name, in the order they are declared."""
        return tuple(fields_of(cls))

    def is_set(self, name: str) -> bool:
        """Whether `name` was given (a keyword, an OMOIDE_* variable, the config
        file or `updated`) rather than left at its default."""
        return name in self._given

    def updated(self, **changes: object) -> Settings:
        """A copy with `changes` checked and applied; the environment and the
        config file are not read again."""
        fields = fields_of(type(self))
        copy = object.__new__(type(self))
        copy.__dict__.update(self.__dict__)
        problems: list[str] = []
        for name, value in changes.items():
            try:
                if name not in fields:
                    raise ValueError("there is no setting with this name")
                setattr(copy, name, fields[name].check(value))
            except ValueError as exc:
                problems.append(f"{name}: {exc}")
        if problems:
            raise SettingsError(problems)
        copy._given = self._given | changes.keys()
        return copy

    def __repr__(self) -> str:
        values = ", ".join(f"{name}={getattr(self, name)!r}" for name in fields_of(type(self)))
        return f"{type(self).__name__}({values})"

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and all(getattr(self, n) == getattr(other, n) for n in fields_of(type(self)))

    @property
    def resolved_backend(self) -> Literal["local", "openai", "anthropic"]:
        if self.backend != "auto":
            return self.backend
        return "openai" if self.base_url else "local"

    def summarizer(self) -> "Settings":
        """The settings for the compression backend: the chat's, with overrides."""
        if not (self.summary_backend or self.summary_base_url or self.summary_model):
            return self
        update: dict[str, object] = {}
        if self.summary_backend:
            update["backend"] = self.summary_backend
        if self.summary_base_url:
            update["base_url"] = self.summary_base_url
        if self.summary_model:
            update["model"] = self.summary_model
        if self.summary_api_key:
            update["api_key"] = self.summary_api_key
        return self.updated(**update)


def config_warnings() -> list[str]:
    """Keys in the config file that omoide does not know (a typo is otherwise
    ignored without a word), each with the closest known key."""
    import difflib

    path = locations.config_file()
    try:
        data = read_toml(path)
    except (OSError, ValueError):
        return []  # missing, or unreadable: load_settings says so
    known = list(Settings.field_names())
    warnings = []
    for key in data:
        if key in known:
            continue
        close = difflib.get_close_matches(key.lower(), known, n=1, cutoff=0.6)
        hint = f" Did you mean '{close[0]}'?" if close else " `omoide doctor` lists nothing else wrong; see the README for the keys."
        warnings.append(f"Unknown setting '{key}' in {path} is ignored.{hint}")
    return warnings


def load_settings(**overrides: object) -> Settings:
    """Read the settings, turning any problem into a ConfigError that names it."""
    path = locations.config_file()
    try:
        return Settings(**overrides)
    except SettingsError as exc:
        raise ConfigError(
            f"The settings are not valid ({'; '.join(exc.problems)}).",
            f"Fix {path} or the OMOIDE_* environment variables.",
        ) from exc
    except Exception as exc:  # tomllib.TOMLDecodeError, an unreadable file
        raise ConfigError(
            f"Cannot read the config file {path}: {exc}.",
            "Fix its TOML syntax, or move it away to start from the defaults.",
        ) from exc
