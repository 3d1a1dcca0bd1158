"""`omoide models`: list every model you could chat with, choose the default, download one."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table
from rich.text import Text

from omoide.cli.common import fail, run, stderr, stdout
from omoide.errors import OmoideError
from omoide.safe_text import oneline, safe

if TYPE_CHECKING:
    from omoide.config.settings import Settings


app = typer.Typer(name="models", invoke_without_command=True, help="List models, choose the default, download a GGUF.")



NAME_WIDTH = 100
"""Model names and details come from servers: a longer one is cut on screen."""
DETAIL_WIDTH = 160


@app.callback()
def models(ctx: typer.Context) -> None:
    """List the embedded models, the downloaded ones and every model on the servers found running here."""
    if ctx.invoked_subcommand is not None:
        return
    from omoide.llm.served import list_servers
    from omoide.models import choose
    from omoide.models.catalog import RECOMMENDED

    settings = _settings()

    servers, configured = run(lambda: list_servers(settings))
    table = Table("", "name", "kind", "where / what", title="Models")

    def add(choice: choose.ModelChoice) -> None:
        mark = "●" if choose.is_current(choice, settings) else ""
        table.add_row(mark, safe(oneline(choice.name, NAME_WIDTH)), choice.kind,
                      safe(oneline(choice.detail, DETAIL_WIDTH), style="" if choice.available else "dim"))

    for choice in choose.local_choices():
        add(choice)
    for server in servers:
        listed = choose.server_choices([server])
        for choice in choose.shown(listed, settings):
            add(choice)
        if len(listed) > choose.MODELS_SHOWN_PER_SERVER:
            table.add_row("", Text(f"… {len(listed) - choose.MODELS_SHOWN_PER_SERVER:,} more", style="dim"), "server",
                          safe(f"{server.name} at {server.base_url} lists {len(listed):,} models; "
                               "`omoide models use NAME` takes any of them", style="dim"))
    out = stdout()
    out.print(table)
    if configured is not None and configured.problem is not None:
        problem = configured.problem
        out.print(safe(f"The server in base_url ({settings.backend.base_url}) did not list its models: "
                       f"{problem.message} {problem.hint}".strip(), style="yellow"))
    elif configured is not None and not settings.backend.model:
        out.print(safe(f"The default is the server in base_url ({settings.backend.base_url}), with the model it picks; "
                       "set model (OMOIDE_MODEL) to choose one.", style="dim"))
    if not servers and configured is None:
        out.print(Text("No model server answered on this machine (Ollama, llama.cpp, LM Studio, KoboldCpp, vLLM, SGLang, text-generation-webui).", style="dim"))
    recommended = Table("name", "size", "RAM", "licence", "", title="Recommended downloads (`omoide models pull NAME`)")
    for model in RECOMMENDED:
        recommended.add_row(model.name, model.size, model.ram, model.licence, model.note)
    out.print(recommended)
    out.print(Text("● marks the default. `omoide models use NAME` changes it.", style="dim"))


def _settings() -> Settings:
    from omoide.config.settings import load_settings

    try:
        return load_settings()
    except OmoideError as exc:
        fail(exc)


@app.command()
def use(
    name: Annotated[str, typer.Argument(help="A name from `omoide models`: an embedded model, a downloaded file, or a server's model.")],
    server: Annotated[str | None, typer.Option("--server", help="The server's address, when the model is on a server not found by itself, or on several.")] = None,
) -> None:
    """Make NAME the default model (written to config.toml)."""
    from omoide.models.discovery import discover
    from omoide.models import choose

    settings = _settings()

    async def go() -> choose.ModelChoice:
        local = choose.local_choices()
        if any(c.name == name or c.name.removesuffix(".gguf") == name for c in local) and server is None:
            return choose.pick(name, local)
        servers = await discover([server], timeout=settings.models.discover_timeout) if server else await choose.find_servers(settings)
        if server and not servers:
            raise OmoideError(f"Nothing answered at {server}.", "Start the server, or check the address (for example http://127.0.0.1:11434).")
        return choose.pick(name, local + choose.server_choices(servers), server)

    choice = run(go)
    try:
        path = choose.make_default(choice)
    except OmoideError as exc:
        fail(exc)
    where = f" on {choice.base_url}" if choice.base_url else ""
    stdout().print(safe(f"The default model is now {oneline(choice.name, NAME_WIDTH)}{where} (saved in {path})."))


@app.command()
def pull(
    source: Annotated[str, typer.Argument(help="A recommended name, REPO/FILE.gguf on Hugging Face, or a URL.")],
    sha256: Annotated[str | None, typer.Option("--sha256", help="The file's SHA-256, checked when the download ends.")] = None,
) -> None:
    """Download a GGUF model into the data directory (resumes an interrupted download)."""
    from rich.progress import BarColumn, DownloadColumn, Progress, TimeRemainingColumn, TransferSpeedColumn

    from omoide.models.pull import pull as download
    from omoide.models.pull import resolve

    try:
        target = resolve(source)
    except OmoideError as exc:
        fail(exc)
    deadline = _settings().models.pull_deadline
    err = stderr()
    columns = ("[progress.description]{task.description}", BarColumn(), DownloadColumn(), TransferSpeedColumn(), TimeRemainingColumn())
    with Progress(*columns, console=err, transient=False) as progress:
        task = progress.add_task(target.filename, total=None)

        def update(done: int, total: int | None) -> None:
            progress.update(task, completed=done, total=total)

        path = run(lambda: download(source, sha256=sha256, progress=update, deadline=deadline))
    if not err.is_terminal:
        err.print(f"downloaded {path.stat().st_size:,} bytes")
    use_name = path.name
    stdout().print(Text(f"Saved {path}. Chat with it: omoide models use {use_name}"))
