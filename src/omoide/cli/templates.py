"""`omoide templates`: list, show, edit and reset the prompt templates of the
memory steps (your copies override the shipped defaults)."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.text import Text

import omoide.memory.diary  # noqa: F401 - these register their templates
import omoide.memory.summary  # noqa: F401
import omoide.world.steps  # noqa: F401
from omoide.cli.common import fail, stderr, stdout
from omoide.errors import OmoideError
from omoide.memory import templates
from omoide.safe_text import safe

app = typer.Typer(name="templates", help="List, edit and reset the prompt templates of the memory steps.", no_args_is_help=True)
out, err = stdout(), stderr()


@app.command("list")
def templates_list() -> None:
    """Every template, whether your copy or the shipped default is in force, and why."""
    for template in templates.all_templates():
        line = Text(f"{template.spec.name:<22}", style="bold")
        line.append(f"{template.source:<28}")
        line.append(template.spec.summary)
        out.print(line)
        if template.problem:
            out.print(Text(f"  ! {templates.override_path(template.spec.name)}: {template.problem}; "
                           "the shipped default is used until it is fixed.", style="yellow"))
    out.print(Text(f"\nYour copies live in {templates.templates_dir()}. Placeholders: `omoide templates show NAME`.", style="dim"))


@app.command("show")
def templates_show(name: Annotated[str, typer.Argument(help="Template name, e.g. world.goal.")]) -> None:
    """Print the template in force and the placeholders it may use."""
    try:
        template = templates.get(name)
    except OmoideError as exc:
        fail(exc)
    out.print(Text(f"{name} ({template.source}); placeholders: " + ", ".join("{" + p + "}" for p in template.spec.placeholders),
                   style="bold"))
    out.print(safe(template.text))


@app.command("edit")
def templates_edit(name: Annotated[str, typer.Argument(help="Template name, e.g. world.goal.")]) -> None:
    """Open your copy of a template in $EDITOR (made from the default the first time)."""
    try:
        edited = templates.edit(name)
    except OmoideError as exc:
        fail(exc)
    path = edited.path
    if edited.editor_failed:
        kept = f" What it left in {path} is checked below." if path.exists() and edited.changed else ""
        err.print(Text(f"Not saved: {edited.editor_failed}.{kept}", style="red"))
    if edited.problem:
        err.print(Text(f"{path}: {edited.problem}. The shipped default is used until it is fixed: "
                       f"`omoide templates edit {name}` again, or `omoide templates reset {name}`.", style="red"))
        raise typer.Exit(1)
    if edited.editor_failed:
        raise typer.Exit(1)
    if not path.exists():
        out.print(Text(f"No change: {name} is the shipped default (no copy of yours is kept)."))
    elif not edited.changed:
        out.print(Text(f"No change: your copy {path} is as it was."))
    else:
        out.print(Text(f"Saved {path}; it is used from the next memory update on."))


@app.command("reset")
def templates_reset(name: Annotated[str, typer.Argument(help="Template name, e.g. world.goal.")]) -> None:
    """Go back to the shipped default; your copy is kept beside it, renamed."""
    try:
        kept = templates.reset(name)
    except OmoideError as exc:
        fail(exc)
    out.print(Text(f"{name} is the shipped default again." + (f" Your copy was kept as {kept}." if kept else " (It already was.)")))
