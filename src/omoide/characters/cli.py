"""`omoide characters ...`: list, show, import and export characters."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console
from rich.markdown import Markdown
from rich.table import Table

from pathlib import Path

from omoide.characters.cards import export_card_json, export_card_png, import_card
from omoide.characters.library import find_character, scan_characters
from omoide.characters.model import substitute
from omoide.errors import OmoideError

app = typer.Typer(no_args_is_help=True, help="List, show, import and export characters.")
out = Console()
err = Console(stderr=True)


def _fail(exc: OmoideError) -> None:
    err.print(f"[bold red]Error:[/] {exc.message}", soft_wrap=True)
    if exc.hint:
        err.print(f"[dim]{exc.hint}[/]", soft_wrap=True)
    raise typer.Exit(1)


@app.command("list")
def list_() -> None:
    """The characters you can chat with: shipped ones and your own."""
    listing = scan_characters()
    table = Table("id", "name", "source", "about", title="Characters")
    for c in listing.characters:
        source = "bundled" if c.bundled else ("imported" if c.raw_card is not None else "yours")
        about = " ".join(substitute(c.description, char=c.display_name, user="you").split())
        table.add_row(c.id, c.display_name, source, about[:70] + ("…" if len(about) > 70 else ""))
    out.print(table)
    for problem in listing.problems:
        err.print(f"[yellow]Skipped:[/] {problem.message} [dim]{problem.hint}[/]")


@app.command()
def show(name: Annotated[str, typer.Argument(help="Character id or name.")]) -> None:
    """Everything a character's card says, and where its files are."""
    try:
        c = find_character(name)
    except OmoideError as exc:
        _fail(exc)
        return
    parts = [f"# {c.display_name}", f"*{c.source}*"]
    for title, body in (
        ("Description", c.description), ("Personality", c.personality), ("Scenario", c.scenario),
        ("First message", c.first_message), ("Example dialogue", c.example_dialogue),
        ("System prompt", c.system_prompt), ("Creator's notes (never sent to the model)", c.creator_notes),
    ):
        if body:
            parts.append(f"## {title}\n\n{body}")
    if c.alternate_greetings:
        parts.append("## Alternate greetings\n\n" + "\n".join(f"- {g}" for g in c.alternate_greetings))
    if c.character_book and c.character_book.entries:
        parts.append("## Lorebook\n\n" + "\n".join(
            f"- **{e.name or ', '.join(e.keys)}** ({'always' if e.constant else 'keys: ' + ', '.join(e.keys)})"
            for e in c.character_book.entries))
    out.print(Markdown("\n\n".join(parts)))


@app.command("import")
def import_(files: Annotated[list[Path], typer.Argument(help="Card files: .png or .json (Character Card V1, V2 or V3).")]) -> None:
    """Import character cards into your characters folder."""
    failed = 0
    for path in files:
        try:
            character = import_card(path)
        except OmoideError as exc:
            failed += 1
            err.print(f"[red]✗[/] {exc.message} [dim]{exc.hint}[/]", soft_wrap=True)
            continue
        out.print(f"[green]✓[/] {path} → [bold]{character.id}[/] ({character.display_name}). Chat with `omoide chat {character.id}`.", soft_wrap=True)
    if failed:
        raise typer.Exit(1)


@app.command()
def export(
    name: Annotated[str, typer.Argument(help="Character id or name.")],
    format: Annotated[str, typer.Option("--format", "-f", help="png (both ccv3 and chara chunks) or json.")] = "png",
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Where to write (default: ID.png / ID.json here).")] = None,
) -> None:
    """Export a character as a Character Card (V3, with a V2 chunk in PNGs)."""
    if format not in ("png", "json"):
        _fail(OmoideError(f"Unknown format '{format}'.", "Use --format png or --format json."))
    try:
        character = find_character(name)
    except OmoideError as exc:
        _fail(exc)
        return
    target = output or Path(f"{character.id}.{format}")
    if format == "json":
        data = export_card_json(character)
    else:
        image = character.source / "card.png" if character.source else None
        data = export_card_png(character, image.read_bytes() if image and image.is_file() else None)
    tmp = target.with_name(f".{target.name}.tmp")
    tmp.write_bytes(data)
    tmp.replace(target)
    out.print(f"Wrote {target} ({len(data):,} bytes).")
