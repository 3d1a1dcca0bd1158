"""`omoide doctor` (check each part in turn and say plainly what is wrong) and
`omoide paths` (where omoide keeps things)."""

from __future__ import annotations

import os

import typer
from rich.console import Console
from rich.text import Text

from omoide import locations
from omoide.cli.common import run, stdout
from omoide.config.settings import Settings, ignored_config_keys, load_settings
from omoide.errors import OmoideError
from omoide.safe_text import safe, some

console = Console(soft_wrap=True)
MODELS_NAMED = 10
"""A server's models named on its line; the rest are counted (`omoide models` lists more)."""
CHARACTERS_NAMED = 20
"""Characters named on their line; the rest are counted (`omoide characters list` lists them)."""


def _ok(label: str, detail: str) -> None:
    console.print(Text.assemble(("✓", "green"), f" {label}: ", safe(detail)))


def _bad(label: str, exc: OmoideError | str) -> None:
    message = exc.message if isinstance(exc, OmoideError) else exc
    console.print(Text.assemble(("✗", "red"), f" {label}: ", safe(message)))
    if isinstance(exc, OmoideError) and exc.hint:
        console.print(Text.assemble("    ", safe(exc.hint, "dim")))


def _key_source(settings: Settings) -> str:
    if settings.backend.api_key is None:
        return "not set"
    return "set (from OMOIDE_API_KEY)" if os.environ.get("OMOIDE_API_KEY") else f"set (from {locations.config_file()})"


async def _servers(settings: Settings) -> None:
    """Model servers running here: information, never a failure."""
    from rich.text import Text

    from omoide.models.discovery import discover

    if settings.models.discover_servers == []:
        console.print("  servers: discovery is off (discover_servers = [])")
        return
    found = await discover(settings.models.discover_servers, timeout=settings.models.discover_timeout)
    if not found:
        console.print("  servers: none answered on this machine (Ollama, llama.cpp, LM Studio, KoboldCpp, vLLM, SGLang, text-generation-webui)")
        return
    for server in found:
        count = len(server.models)
        models = f"{count:,} model{'s' if count != 1 else ''}: {some(server.models, limit=MODELS_NAMED, width=60)}" if count else "no models listed"
        console.print(Text.assemble(("✓ ", "green"), safe(f"server: {server.name} at {server.base_url} ({models})")))
    console.print("    [dim]`omoide models use NAME` makes one of them the default.[/]")


def _log_writable() -> bool:
    """Write a line to the log, and say whether it (and every line before it) got there."""
    import logging

    from omoide.config.logs import log_failure

    logging.getLogger(__name__).info("omoide doctor is checking")  # the file handler flushes every line
    failure = log_failure()
    if failure is None:
        _ok("log", str(locations.log_file()))
        return True
    _bad("log", OmoideError(f"{locations.log_file()} cannot be written ({failure}); what goes wrong is not recorded.",
                            "Free some space on its disk, or check its folder's permissions (`omoide paths`)."))
    return False


async def run_doctor() -> bool:
    healthy = True
    path = locations.config_file()
    try:
        settings = load_settings()
        _ok("config", f"{path}" if path.exists() else f"{path} (not present; using defaults)")
    except OmoideError as exc:
        _bad("config", exc)
        return False

    # A key in its old flat place is still read: the warning printed before this
    # report names its new place, and nothing needs fixing for it to work.
    for warning in ignored_config_keys():
        _bad("config", warning)
        healthy = False
    from omoide.config.keymap import keymap_problems

    for problem in keymap_problems(settings.ui.keymap):
        _bad("keymap", problem)
        healthy = False
    if not _log_writable():
        healthy = False
    for loose, mode in locations.loose_permissions():
        kind = "folder" if loose.is_dir() else "file"
        _bad("permissions", OmoideError(
            f"{loose} can be read by other users (mode {mode:o}); it holds your chats or settings.",
            f"chmod {'700' if kind == 'folder' else '600'} '{loose}'",
        ))
        healthy = False

    from omoide.store import Store

    try:
        store = await Store.open(synchronous=settings.store.synchronous)
        try:
            count = await store.messages.count()
            chats = await store.chats.list(include_archived=True)
        finally:
            await store.close()
        from omoide.store.wal import kept_damage

        for damage in kept_damage(locations.database_file()):
            _bad("database", damage)
            healthy = False
        if healthy:
            _ok("database", f"{locations.database_file()} ({len(chats)} chats, {count} messages, WAL)")
    except OmoideError as exc:
        _bad("database", exc)
        healthy = False

    try:
        from omoide.characters.library import Library
        from omoide.store.library import CardIndexFile

        ids = [c.id for c in Library(CardIndexFile(locations.database_file())).entries()]  # the index: no card is read
        _ok("characters", f"{len(ids):,}: {some(ids, limit=CHARACTERS_NAMED)}" if len(ids) > CHARACTERS_NAMED else ", ".join(ids) or "none")
    except OmoideError as exc:
        _bad("characters", exc)
        healthy = False

    kind = settings.backend.resolved
    where = settings.backend.base_url or "in-process"
    console.print(safe(f"  backend: {kind} ({where}), model: {settings.backend.model or 'default'}, api key: {_key_source(settings)}"))
    try:
        from omoide.llm.factory import make_backend

        from omoide.chat.toolform import resolve

        backend = make_backend(settings)
        try:
            detail = await backend.check()
            _ok("backend", detail)
            found = await resolve(settings, backend)
            form = "native tool calls" if found.form == "native" else "the inline <save_memory> form"
            _ok("diary tool", f"{form}: {found.reason}")
        finally:
            await backend.aclose()
    except OmoideError as exc:
        _bad("backend", exc)
        healthy = False

    summary_settings = settings.summarizer_settings()
    if summary_settings is not settings:
        try:
            from omoide.llm.factory import make_backend

            backend = make_backend(summary_settings)
            try:
                _ok("summarizer", await backend.check())
            finally:
                await backend.aclose()
        except OmoideError as exc:
            _bad("summarizer", exc)
            healthy = False
    await _servers(settings)
    console.print("[bold green]All good.[/]" if healthy else "[bold red]Something needs fixing (see above).[/]")
    return healthy


app = typer.Typer()


@app.command()
def doctor() -> None:
    """Check the configuration, the database and the backend, and say what is wrong."""
    ok = run(run_doctor)
    raise typer.Exit(0 if ok else 1)


@app.command()
def paths() -> None:
    """Show where omoide keeps its config, data and logs."""
    out = stdout()
    out.print(safe(f"config file: {locations.config_file()}"))
    out.print(safe(f"database:    {locations.database_file()}"))
    out.print(safe(f"characters:  {locations.user_characters_dir()}"))
    out.print(safe(f"log file:    {locations.log_file()}"))
