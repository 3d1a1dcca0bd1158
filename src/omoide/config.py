"""Settings: built-in defaults, then the TOML file, then OMOIDE_* environment
variables (highest). The API key is read from here and nowhere else; it is
never written to the database, the logs or an export."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, ValidationError, field_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from omoide import locations
from omoide.errors import ConfigError

BackendKind = Literal["auto", "local", "openai", "anthropic"]


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="OMOIDE_", extra="ignore", validate_default=True
    )

    backend: BackendKind = "auto"
    """'local' runs the embedded SmolLM2 in-process; 'openai' talks to any
    OpenAI-compatible server; 'anthropic' to the Messages API. 'auto' picks
    'openai' when base_url is set, else 'local'."""
    base_url: str | None = None
    """e.g. http://127.0.0.1:11434/v1 for Ollama, http://127.0.0.1:8080/v1 for llama.cpp."""
    model: str | None = None
    """The model name sent to the server. Empty for the local backend."""
    api_key: SecretStr | None = None
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
    discover_timeout: float = Field(0.5, gt=0)
    """Seconds a server may take to list its models before discovery moves on."""
    tools: Literal["auto", "native", "inline"] = "auto"
    """How save_memory is offered: native tool calls, an inline tag, or auto-detect."""

    temperature: float = Field(0.8, ge=0.0, le=2.0)
    top_p: float = Field(0.95, gt=0.0, le=1.0)
    max_tokens: int = Field(400, ge=1)
    """Longest reply, in tokens. The embedded models stop at 200 unless this is set."""
    min_p: float = Field(0.1, ge=0.0, lt=1.0)
    """Embedded model: drop tokens less likely than this share of the likeliest."""
    top_k: int = Field(40, ge=0)
    """Embedded model: sample among this many likeliest tokens (0: all)."""
    repeat_penalty: float = Field(1.1, ge=1.0, le=2.0)
    """Embedded model: penalty on tokens seen in the last 64 (1.0: none)."""
    frequency_penalty: float = Field(0.3, ge=0.0, le=2.0)
    """Embedded model: penalty growing with how often a token already appears in the reply."""
    presence_penalty: float = Field(0.2, ge=0.0, le=2.0)
    """Embedded model: penalty on any token already in the reply."""
    embedded_prompt: Literal["auto", "script", "chat"] = "auto"
    """Embedded model: a chat reply is the next line of a play script it continues
    ("script") or a turn through its chat template ("chat"). "auto": the script for
    SmolLM2, which through its template answers like an assistant; Gemma's turn
    format for the Gemma 3 270M base model, which leaves half its script lines
    empty (benchmarks/first_chat.py)."""
    seed: int | None = None
    """Embedded model: a fixed seed makes its replies repeatable (benchmarks use it)."""
    context_size: int = Field(8192, ge=512)
    """The model's context window; the prompt is trimmed to fit with room for the reply."""
    threads: int | None = None
    """CPU threads for the local backend (default: all cores)."""

    request_timeout: float = Field(60.0, gt=0)
    """Seconds to wait for the first byte of a reply."""
    stall_timeout: float = Field(30.0, gt=0)
    """Seconds without a byte, mid-stream, before the reply is given up as stalled."""
    memory_timeout: float = Field(180.0, gt=0)
    """Seconds a background memory call (summary, diary compression) may run before it is given up."""
    max_retries: int = Field(3, ge=0)
    """Retries on 408/409/429/5xx, only before the first byte arrives."""

    summary_backend: BackendKind | None = None
    """A separate (cheaper) backend for compression; defaults to the chat backend."""
    summary_base_url: str | None = None
    summary_model: str | None = None
    summary_api_key: SecretStr | None = None

    recent_messages: int = Field(15, ge=2)
    """Messages always sent verbatim (tier 1)."""
    summary_threshold: int = Field(20, ge=3)
    """Uncovered messages on the path that trigger compression into the summary."""
    summary_merge_chars: int = Field(6000, ge=0)
    """Each compression appends a paragraph to the running summary (the earlier text
    stays byte for byte, so prompt caches keep it) until the summary is this long;
    the next compression then rewrites it into one. 0: rewrite every time."""
    diary_prompt_lines: int = Field(50, ge=1)
    """Diary lines injected into every prompt."""
    diary_compress_lines: int = Field(50, ge=2)
    """Diary length, in lines, past which the diary is compressed."""
    lore_budget_percent: int = Field(25, ge=1, le=100)
    """Share of the context that triggered lore may take, for lorebooks that set no
    `token_budget` (SillyTavern's world info budget works the same way)."""

    memory_style: Literal["summary", "memos", "both"] = "summary"
    """'summary': the running summary (seed 002, the default). 'memos': the memo book
    instead (seed 003: the last memo_recent_messages raw, plus memos). 'both': the
    summary and the memos."""
    memo_batch: int = Field(8, ge=2)
    """Messages per memo: every full batch on the path gets one, in the background."""
    memo_prompt_count: int = Field(15, ge=0)
    """The most memos in the prompt (the newest ones before the raw window)."""
    memo_roll_step: int = Field(5, ge=1)
    """Old memos leave the prompt this many at a time, so the prompt's memo layer
    changes less often (1: one at a time, as the seed does)."""
    memo_recent_messages: int = Field(16, ge=2)
    """In the 'memos' style, at least this many messages are sent raw (8 pairs)."""
    diary_selection: Literal["recent", "weighted"] = "recent"
    """Which diary lines enter the prompt when there are more than diary_prompt_lines:
    'recent' keeps the last ones; 'weighted' the strongest entries (importance,
    decay, mentions), shown in date order."""
    memory_half_life_days: float = Field(30.0, gt=0)
    """Days after which a memory's weight has halved (mentions raise it again)."""
    recall_tool: bool = False
    """Offer the character a recall tool that searches the whole story (off: characters
    that can search tend to replay old scenes)."""
    profile_learning: Literal["ask", "auto", "off"] = "ask"
    """What happens to a fact a character learns about you: proposed for you to
    accept (ask), added at once (auto), or ignored (off)."""
    world_rolling: int = Field(10, ge=1)
    """Conversation summaries (and offscreen notes) each rolling list keeps."""
    world_idle_hours: float = Field(3.0, ge=0)
    """A chat idle this long ends its conversation on its own (0: only /end does)."""
    world_min_messages: int = Field(4, ge=1)
    """New messages a conversation needs before idleness ends it."""
    world_familiarity_gain: float = Field(0.15, gt=0, lt=1)
    """Share of the gap to full familiarity closed by one shared conversation."""
    world_familiarity_decay: float = Field(0.03, ge=0, lt=1)
    """Share of familiarity lost for every conversation without the other."""
    world_max_tokens: int = Field(350, ge=8)
    """The longest answer of one end-of-conversation step (the steps ask for less where less is enough)."""
    world_transcript_chars: int = Field(6000, ge=500)
    """The most of a conversation's text (its end) that each end-of-conversation step reads."""
    gossip_rate: float = Field(0.3, ge=0, le=1)
    """Chance, at the start of a conversation, that an absent character becomes its gossip target."""
    scene_seed: int | None = None
    """Seed of the random source that picks who speaks next in a scene (None: a fresh one each time)."""

    user_name: str = "You"
    """Your name, used for {{user}}."""
    user_persona: str = ""
    """What the character knows about you from the start."""
    personas: dict[str, str] = Field(default_factory=dict)
    """More personas to switch to with /persona NAME: name -> description."""

    keymap: dict[str, str] = Field(default_factory=dict)
    """Remap keys in the chat by binding id, e.g. {"chat.diary" = "f2", "chat.prompt" = "f3"}."""

    synchronous: Literal["NORMAL", "FULL"] = "NORMAL"
    """SQLite durability: FULL survives power loss at some speed cost."""

    @field_validator("base_url", "summary_base_url")
    @classmethod
    def _check_url(cls, value: str | None) -> str | None:
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

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        toml = TomlConfigSettingsSource(settings_cls, toml_file=locations.config_file())
        return (init_settings, env_settings, toml)

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
        return self.model_copy(update=update)


def config_warnings() -> list[str]:
    """Keys in the config file that omoide does not know (a typo is otherwise
    ignored without a word), each with the closest known key."""
    import difflib
    import tomllib

    path = locations.config_file()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []  # missing, or unreadable: load_settings says so
    known = list(Settings.model_fields)
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
        return Settings(**overrides)  # type: ignore[arg-type]
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'value'}: {err['msg']}"
            for err in exc.errors()
        )
        raise ConfigError(
            f"The settings are not valid ({problems}).",
            f"Fix {path} or the OMOIDE_* environment variables.",
        ) from exc
    except Exception as exc:  # tomllib.TOMLDecodeError and friends
        raise ConfigError(
            f"Cannot read the config file {path}: {exc}.",
            "Fix its TOML syntax, or move it away to start from the defaults.",
        ) from exc
