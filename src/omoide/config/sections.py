"""The settings' sections: each subsystem reads its own. Every field is an
annotated class attribute (its type with its checks in Annotated, its default,
its docstring), read by `omoide.config.fields`.

A field's *name* is its key in its section of config.toml; its *id* is the name
it had when the file was flat, and is still: the suffix of its OMOIDE_* variable
(OMOIDE_SUMMARY_THRESHOLD), the keyword `Settings(...)` takes, and a top-level
key an older config.toml may still hold. Ids equal names except where `IDS`
says otherwise.

Standard library only: every launch of omoide imports this.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal

from omoide.config.fields import Range, fields_of
from omoide.config.secret import Secret

BackendKind = Literal["auto", "local", "openai", "anthropic"]


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


class Section:
    """A section of the settings: its fields' values, checked by the caller."""

    NAME: ClassVar[str] = ""
    """The section's table in config.toml."""

    def __init__(self, **values: Any) -> None:
        for name, field in fields_of(type(self)).items():
            setattr(self, name, values[name] if name in values else field.fresh_default())

    def __repr__(self) -> str:
        values = ", ".join(f"{name}={getattr(self, name)!r}" for name in fields_of(type(self)))
        return f"{type(self).__name__}({values})"

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and all(getattr(self, n) == getattr(other, n) for n in fields_of(type(self)))


DEFAULT_CONTEXT = 8192
"""The context size the memory's lengths are set for; a larger context scales them up."""


class BackendSettings(Section):
    """[backend]: the chat's model and how to reach it."""

    NAME = "backend"
    kind: BackendKind = "auto"
    """'local' runs the embedded model in-process; 'openai' talks to any
    OpenAI-compatible server; 'anthropic' to the Messages API. 'auto' picks
    'openai' when base_url is set, else 'local'."""
    base_url: Annotated[str | None, _url] = None
    """e.g. http://127.0.0.1:11434/v1 for Ollama, http://127.0.0.1:8080/v1 for llama.cpp."""
    model: str | None = None
    """The model name sent to the server. Empty for the embedded model."""
    api_key: Secret | None = None
    """From OMOIDE_API_KEY or the config file. Never stored anywhere else."""
    tools: Literal["auto", "native", "inline"] = "auto"
    """How save_memory is offered: native tool calls, an inline tag, or auto-detect."""
    temperature: Annotated[float, Range(ge=0.0, le=2.0)] = 0.8
    """Sampling temperature: higher is more varied, 0 always takes the likeliest token."""
    top_p: Annotated[float, Range(gt=0.0, le=1.0)] = 0.95
    """Sample among the likeliest tokens that together make up this share."""
    max_tokens: Annotated[int, Range(ge=1)] = 400
    """Longest reply, in tokens. The embedded models stop at 200 unless this is set."""
    context_size: Annotated[int, Range(ge=512)] = DEFAULT_CONTEXT
    """The model's context window; the prompt is trimmed to fit with room for the reply."""
    request_timeout: Annotated[float, Range(gt=0)] = 60.0
    """Seconds to wait for the first byte of a reply."""
    stall_timeout: Annotated[float, Range(gt=0)] = 30.0
    """Seconds without a byte, mid-stream, before the reply is given up as stalled."""
    max_retries: Annotated[int, Range(ge=0)] = 3
    """Retries on 408/409/429/5xx, only before the first byte arrives."""

    @property
    def resolved(self) -> Literal["local", "openai", "anthropic"]:
        if self.kind != "auto":
            return self.kind
        return "openai" if self.base_url else "local"


class SummarizerSettings(Section):
    """[summarizer]: a separate (cheaper) backend for memory work; each field
    left unset is the chat backend's."""

    NAME = "summarizer"
    kind: BackendKind | None = None
    """Like [backend] kind."""
    base_url: Annotated[str | None, _url] = None
    """Like [backend] base_url, e.g. a small model on another server."""
    model: str | None = None
    """Like [backend] model, e.g. qwen2.5:1.5b."""
    api_key: Secret | None = None
    """Like [backend] api_key (OMOIDE_SUMMARY_API_KEY)."""


class EmbeddedSettings(Section):
    """[embedded]: the model omoide runs itself when no server is set."""

    NAME = "embedded"
    model: str | None = None
    """By name: an embedded one (smollm2-135m, gemma-3-270m) or a file `omoide
    models pull` downloaded. Default: the default embedded model."""
    model_path: Path | None = None
    """A GGUF file of your own (overrides model)."""
    min_p: Annotated[float, Range(ge=0.0, lt=1.0)] = 0.1
    """Drop tokens less likely than this share of the likeliest."""
    top_k: Annotated[int, Range(ge=0)] = 40
    """Sample among this many likeliest tokens (0: all)."""
    repeat_penalty: Annotated[float, Range(ge=1.0, le=2.0)] = 1.1
    """Penalty on tokens seen in the last 512 (1.0: none)."""
    frequency_penalty: Annotated[float, Range(ge=0.0, le=2.0)] = 0.3
    """Penalty growing with how often a token already appears in the reply."""
    presence_penalty: Annotated[float, Range(ge=0.0, le=2.0)] = 0.2
    """Penalty on any token already in the reply."""
    prompt: Literal["auto", "script", "chat"] = "auto"
    """A chat reply is the next line of a play script the model continues
    ("script") or a turn through its chat template ("chat"). "auto": the script
    for SmolLM2, Gemma's turn format for the Gemma 3 270M base model."""
    seed: int | None = None
    """A fixed seed makes replies repeatable (benchmarks use it)."""
    threads: int | None = None
    """Threads that generate the reply (default: chosen from measurement, see docs/engine.md)."""
    batch_threads: int | None = None
    """Threads that evaluate the prompt (default: all cores)."""
    engine_slots: Annotated[int, Range(ge=1, le=16)] = 4
    """Cache slots: one per speaker of a group scene and one for memory work (each keeps
    its prompt cached; each costs a context's worth of memory, see docs/engine.md)."""


class ModelsSettings(Section):
    """[models]: finding model servers on this machine."""

    NAME = "models"
    discover_servers: list[str] | None = None
    """Addresses probed for model servers at first run, in `omoide models` and in
    `omoide doctor`. Default: the usual local ports of Ollama, llama.cpp, LM Studio,
    KoboldCpp, vLLM, SGLang and text-generation-webui; [] turns discovery off."""
    discover_timeout: Annotated[float, Range(gt=0)] = 0.5
    """Seconds a server may take to list its models before discovery moves on."""
    pull_deadline: Annotated[float, Range(gt=0)] = 21600.0
    """Seconds a whole model download (`omoide models pull`, the TUI's downloads) may
    take before it stops, keeping what arrived to resume: a server that drips a few
    bytes at a time cannot hold it forever. Default: 6 hours."""


class MemorySettings(Section):
    """[memory]: the chat's memory (seeds 002, 003 and 000)."""

    NAME = "memory"
    style: Literal["summary", "memos", "both", "none"] = "summary"
    """'summary': the running summary (seed 002, the default). 'memos': the memo book
    instead (seed 003: the last memo_recent_messages raw, plus memos). 'both': the
    summary and the memos. 'none': the last recent_messages raw and no memory work
    (the diary and the world stay; `omoide memory check` uses it as a baseline)."""
    recent_messages: Annotated[int, Range(ge=2)] = 15
    """Messages always sent verbatim (tier 1)."""
    summary_threshold: Annotated[int, Range(ge=3)] = 20
    """Uncovered messages on the path that trigger compression into the summary."""
    summary_merge_chars: Annotated[int, Range(ge=0)] = 6000
    """Each compression appends a paragraph to the running summary (the earlier text
    stays byte for byte, so prompt caches keep it) until the summary is this long;
    the next compression then rewrites it into one. 0: rewrite every time."""
    fallback_after: Annotated[int, Range(ge=1)] = 3
    """Failed summaries in a row (the backend down, too slow) after which the
    story's own sentences with names, numbers and dates are kept instead, so
    nothing falls out of memory while the model cannot write. A summary the model
    wrote badly (its instructions repeated, none of the names it covers) is
    replaced by them at once."""
    writer: Literal["auto", "model", "extract"] = "auto"
    """Who writes summaries, memos and diary compressions: 'model', the model; 'extract',
    no model call: the story's own sentences with names, numbers, dates and places,
    told as said; 'auto': 'extract' on the embedded models, whose summaries invent
    what nobody said (docs/memory.md), 'model' on any other."""
    summary_placement: Literal["auto", "head"] = "auto"
    """Where the summary goes: 'head': before the window; 'auto': each part a
    compression writes (a rewrite too) in the window after the message it was
    written at (the embedded model's play script and OpenAI-compatible servers),
    so a compression never makes a prompt cache read the window again; before the
    window on Anthropic and on an embedded chat template."""
    diary_prompt_lines: Annotated[int, Range(ge=1)] = 50
    """Diary lines injected into every prompt."""
    diary_compress_lines: Annotated[int, Range(ge=2)] = 50
    """Diary length, in lines, past which the diary is compressed."""
    diary_selection: Literal["recent", "weighted"] = "recent"
    """Which diary lines enter the prompt when there are more than diary_prompt_lines:
    'recent' keeps the last ones; 'weighted' the strongest entries (importance,
    decay, mentions), shown in date order."""
    memo_batch: Annotated[int, Range(ge=2)] = 8
    """Messages per memo: every full batch on the path gets one, in the background."""
    memo_prompt_count: Annotated[int, Range(ge=0)] = 15
    """The most memos in the prompt (the newest ones before the raw window)."""
    memo_roll_step: Annotated[int, Range(ge=1)] = 5
    """Old memos leave the prompt this many at a time, so the prompt's memo layer
    changes less often (1: one at a time, as the seed does)."""
    memo_recent_messages: Annotated[int, Range(ge=2)] = 16
    """In the 'memos' style, at least this many messages are sent raw (8 pairs)."""
    half_life_days: Annotated[float, Range(gt=0)] = 30.0
    """Days after which a memory's weight has halved (mentions raise it again)."""
    recall_tool: bool = False
    """Offer the character a recall tool that searches the whole story (off: characters
    that can search tend to replay old scenes)."""
    recall_passages: Annotated[int, Range(ge=0, le=40)] = 20
    """Memories that come to mind: at most this many earlier messages of the story
    (this branch, what the character witnessed, anyone's words, hers too) most
    relevant to the latest ones come back word for word after the window each
    turn, each with the line it completes; 0 turns them off. Not in memory_style
    'none', which keeps only the window."""
    recall_passages_percent: Annotated[int, Range(ge=0, le=50)] = 10
    """Share of context_size, in percent, those passages take at least, however much the
    other memory layers take (estimated at 4 characters a token): a larger context
    remembers more of the story's own words."""
    memory_percent: Annotated[int, Range(ge=0, le=80)] = 32
    """Share of context_size, in percent, the memory layers may take together (summary,
    diary, memos, world, passages): the passages fill what the others leave, at least
    recall_passages_percent."""
    recall_passages_tokens: int | None = None
    """Tokens those passages may take together, instead of recall_passages_percent of the context."""
    recall_passages_plain: bool = False
    """Plain retrieval, as a baseline for `omoide memory check`: the passages by their
    words alone (bm25 over whole messages for the newest one), with no line they complete,
    no meaning and no weights, and given even in memory_style 'none'."""
    def merge_chars(self, context_size: int) -> int:
        """The summary's length at which it is rewritten at `context_size`: summary_merge_chars
        up to the default context, growing with a larger one (0: every time)."""
        return self.summary_merge_chars * max(context_size, DEFAULT_CONTEXT) // DEFAULT_CONTEXT

    def rewrite_tokens(self, context_size: int, least: int) -> int:
        """Tokens a rewrite of the summary may take at `context_size`: `least` at the
        default context, growing as `merge_chars` grows past summary_merge_chars."""
        if not self.summary_merge_chars:
            return least
        return max(least, least * self.merge_chars(context_size) // self.summary_merge_chars)

    def passages_budget(self, context_size: int, taken: int = 0) -> int:
        """The tokens memories that come to mind may take at `context_size`, when the
        other memory layers take `taken` tokens."""
        if self.recall_passages_tokens is not None:
            return max(0, self.recall_passages_tokens)
        least = context_size * self.recall_passages_percent // 100
        return max(least, context_size * self.memory_percent // 100 - taken)

    recall_passages_meaning: bool = True
    """Find and weigh those passages by meaning too: with the static word vectors
    `[local]` installs, and weighed by the server's /v1/embeddings where it answers
    (one request a turn; off: by their words alone)."""
    profile_learning: Literal["ask", "auto", "off"] = "ask"
    """What happens to a fact a character learns about you: proposed for you to
    accept (ask), added at once (auto), or ignored (off)."""
    lore_budget_percent: Annotated[int, Range(ge=1, le=100)] = 25
    """Share of the context that triggered lore may take, for lorebooks that set no
    `token_budget` (SillyTavern's world info budget works the same way)."""
    timeout: Annotated[float, Range(gt=0)] = 180.0
    """Seconds a background memory call (summary, diary compression) may run before it is given up."""


class WorldSettings(Section):
    """[world]: what characters carry across chats (seed 001)."""

    NAME = "world"
    rolling: Annotated[int, Range(ge=1)] = 10
    """Conversation summaries (and offscreen notes) each rolling list keeps."""
    idle_hours: Annotated[float, Range(ge=0)] = 3.0
    """A chat idle this long ends its conversation on its own (0: only /end does)."""
    min_messages: Annotated[int, Range(ge=1)] = 4
    """New messages a conversation needs before idleness ends it."""
    familiarity_gain: Annotated[float, Range(gt=0, lt=1)] = 0.15
    """Share of the gap to full familiarity closed by one shared conversation."""
    familiarity_decay: Annotated[float, Range(ge=0, lt=1)] = 0.03
    """Share of familiarity lost for every conversation without the other."""
    max_tokens: Annotated[int, Range(ge=8)] = 350
    """The longest answer of one end-of-conversation step (the steps ask for less where less is enough)."""
    transcript_chars: Annotated[int, Range(ge=500)] = 6000
    """The most of a conversation's text that each end-of-conversation step reads: a longer one
    keeps what lasts of its beginning (up to half) and as much of its end as the rest holds."""
    gossip_rate: Annotated[float, Range(ge=0, le=1)] = 0.3
    """Chance, at the start of a conversation, that an absent character becomes its gossip target."""


class SceneSettings(Section):
    """[scene]: group scenes."""

    NAME = "scene"
    seed: int | None = None
    """Seed of the random source that picks who speaks next (None: a fresh one each time)."""


class UserSettings(Section):
    """[user]: who you are."""

    NAME = "user"
    name: str = "You"
    """Your name, used for {{user}}. Your profile's name is who you are (the first-run
    screen and `omoide profile edit` set it); this only fills a profile that has no name yet."""
    persona: str = ""
    """What the character knows about you from the start."""
    personas: dict[str, str] = {}  # each Settings gets its own copy of a list or dict default
    """More personas to switch to with /persona NAME: name -> description ([user.personas])."""


class UISettings(Section):
    """[ui]: the terminal UI."""

    NAME = "ui"
    keymap: dict[str, str] = {}
    """Remap keys in the chat by binding id, e.g. {"chat.diary" = "f5", "chat.prompt" = "f6"}; docs/keys.md lists the ids."""
    theme: str = ""
    """The look of the chat: one of Textual's themes by name (e.g. "nord", "gruvbox");
    empty is Textual's default. /theme NAME sets it."""
    portraits: bool = True
    """Show the characters' portraits (the image of their card) in the character picker,
    on the first-run screen and beside each speaker's replies in a scene, drawn in
    half-blocks; false shows names only."""
    welcomed: bool = False
    """Whether the first-run screen (your name, the characters, a real model) has been
    shown; it is shown once, and sets this when it closes."""


class StoreSettings(Section):
    """[store]: the database."""

    NAME = "store"
    synchronous: Literal["NORMAL", "FULL"] = "NORMAL"
    """SQLite durability: FULL survives power loss at some speed cost."""


SECTIONS: tuple[type[Section], ...] = (
    BackendSettings, SummarizerSettings, EmbeddedSettings, ModelsSettings, MemorySettings,
    WorldSettings, SceneSettings, UserSettings, UISettings, StoreSettings,
)

IDS: dict[tuple[str, str], str] = {
    ("backend", "kind"): "backend",
    ("summarizer", "kind"): "summary_backend",
    ("summarizer", "base_url"): "summary_base_url",
    ("summarizer", "model"): "summary_model",
    ("summarizer", "api_key"): "summary_api_key",
    ("embedded", "model"): "local_model",
    ("embedded", "prompt"): "embedded_prompt",
    ("memory", "style"): "memory_style",
    ("memory", "writer"): "memory_writer",
    ("memory", "half_life_days"): "memory_half_life_days",
    ("memory", "timeout"): "memory_timeout",
    ("world", "rolling"): "world_rolling",
    ("world", "idle_hours"): "world_idle_hours",
    ("world", "min_messages"): "world_min_messages",
    ("world", "familiarity_gain"): "world_familiarity_gain",
    ("world", "familiarity_decay"): "world_familiarity_decay",
    ("world", "max_tokens"): "world_max_tokens",
    ("world", "transcript_chars"): "world_transcript_chars",
    ("scene", "seed"): "scene_seed",
    ("user", "name"): "user_name",
    ("user", "persona"): "user_persona",
}
"""(section, name) -> id, where the two differ."""


def places() -> dict[str, tuple[type[Section], str]]:
    """Every setting's id -> (its section, its name there)."""
    found: dict[str, tuple[type[Section], str]] = {}
    for section in SECTIONS:
        for name in fields_of(section):
            key = IDS.get((section.NAME, name), name)
            if key in found:
                raise TypeError(f"two settings have the id {key!r}")
            found[key] = (section, name)
    return found
