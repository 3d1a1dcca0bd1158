"""`omoide personas ...`: the personas you can be, and SillyTavern's imported."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from omoide.cli.common import fail, stderr, stdout
from omoide.errors import OmoideError
from omoide.safe_text import inert, oneline, safe

app = typer.Typer(name="personas", no_args_is_help=True, help="List your personas and import SillyTavern's.")


@app.command("list")
def list_() -> None:
    """Every persona you can be (`/persona NAME` in a chat, `omoide say --persona NAME`)."""
    from omoide.characters.personas import load_personas
    from omoide.config.settings import load_settings

    try:
        settings = load_settings()
    except OmoideError as exc:
        fail(exc)
    imported = {p.name: p for p in load_personas()}
    table = Table("name", "from", "avatar", "description", title="Personas")
    rows = [(settings.user.name, "user_name (the default)", "", settings.user.persona)]
    rows += [(name, "SillyTavern import", "yes" if p.avatar else "", p.description)
             for name, p in imported.items() if name not in settings.user.personas and name != settings.user.name]
    rows += [(name, "config file", "", text) for name, text in settings.user.personas.items()]
    for name, source, avatar, description in rows:
        table.add_row(safe(name), source, avatar, Text(oneline(description, 60)))
    stdout().print(table)


@app.command("import")
def import_(
    file: Annotated[Path, typer.Argument(help="SillyTavern's settings.json (data/default-user/settings.json) or a personas backup.")],
    avatars: Annotated[Path | None, typer.Option("--avatars", help="Where the avatar PNGs are (default: the 'User Avatars' folder beside FILE).")] = None,
) -> None:
    """Import SillyTavern's personas: each name, description and avatar."""
    from omoide.characters.personas import import_tavern_personas
    from omoide.config.settings import load_settings

    try:
        settings = load_settings()
        report = import_tavern_personas(file, avatars, existing={settings.user.name, *settings.user.personas})
    except OmoideError as exc:
        fail(exc)
    out, err = stdout(), stderr()
    for persona in report.imported:
        avatar = " with its avatar" if persona.avatar else ""
        about = oneline(persona.description, 60) or "(no description)"
        out.print(Text.assemble(("✓ ", "green"), (inert(persona.name), "bold"), inert(f"{avatar}: {about}")), soft_wrap=True)
    for note in report.notes:
        err.print(safe(f"Note: {note}", "yellow"), soft_wrap=True)
    for refused in report.refused:
        err.print(Text.assemble(("✗ ", "red"), inert(refused)), soft_wrap=True)
    if not report.imported and not report.refused:
        out.print("There were no personas in it.")
    if not report.imported:
        raise typer.Exit(1)  # as `characters import` does: a script can tell nothing came in
    out.print(safe(f"Imported {len(report.imported)} persona(s). Use one with /persona NAME, or `omoide say --persona NAME`."))
