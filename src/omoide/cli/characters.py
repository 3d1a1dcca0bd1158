"""`omoide characters ...`: list, show, import and export characters."""

from __future__ import annotations

from collections.abc import Sequence
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer
from rich.cells import cell_len, set_cell_size
from rich.console import Console
from rich.table import Table
from rich.text import Text

from omoide import locations
from omoide.characters.cards import MAX_CARD_BYTES, export_card_json, export_card_png, import_card
from omoide.characters.library import find_character, scan_characters, source_kind
from omoide.chat.library import command_library
from omoide.characters.model import LoreEntry, substitute
from omoide.domain.library import IndexedCard
from omoide.cli.common import fail, stdout, stderr
from omoide.errors import CharacterError, OmoideError
from omoide.safe_text import inert, oneline, safe

app = typer.Typer(name="characters", no_args_is_help=True, help="List, show, import and export characters.")




def _short(text: str, width: int = 70) -> str:
    return oneline(text, width)


def _about(entry: IndexedCard) -> str:
    return substitute(entry.about, char=entry.display_name, user="you")


TABLE_ROWS = 200
"""Longer lists are printed as plain columns: laying out a table of 10,000 rows takes rich seconds."""


def _plain_list(out: Console, entries: Sequence[IndexedCard]) -> None:
    """The list as aligned columns, one character a line, every cell inert."""
    idw = min(max(cell_len(oneline(c.id)) for c in entries), 24)
    namew = min(max(cell_len(oneline(c.display_name)) for c in entries), 24)
    aboutw = max(out.width - idw - namew - 8 - 6, 20)
    lines = [f"{'id':<{idw}}  {'name':<{namew}}  {'source':<8}  about"]
    lines += [f"{set_cell_size(oneline(c.id, idw), idw)}  {set_cell_size(oneline(c.display_name, namew), namew)}  "
              f"{c.kind:<8}  {oneline(_about(c), aboutw)}".rstrip() for c in entries]
    out.file.write("\n".join(lines) + "\n")
    out.file.flush()


@app.command("list")
def list_() -> None:
    """The characters you can chat with: shipped ones, imported ones and your own."""
    entries, problems = command_library().survey()
    out = stdout()
    if len(entries) > TABLE_ROWS:
        _plain_list(out, entries)
    else:
        table = Table("id", "name", "source", "about", title="Characters")
        for c in entries:
            table.add_row(safe(c.id), safe(c.display_name), c.kind, Text(_short(_about(c))))
        out.print(table)
    err = stderr()
    for problem in problems:
        err.print(Text.assemble(("Skipped: ", "yellow"), inert(problem.message), " ", (inert(problem.hint), "dim")), soft_wrap=True)


def _lore_label(entry: LoreEntry) -> str:
    return inert(entry.name or ", ".join(entry.keys)) or _short(entry.content, 40) or "(empty)"


@app.command()
def show(name: Annotated[str, typer.Argument(help="Character id or name.")]) -> None:
    """Everything a character says about itself, and where its files are."""
    try:
        c = command_library().find(name, notice=_tell)
    except OmoideError as exc:
        fail(exc)
    out = stdout()
    facts = [f"id {c.id}", source_kind(c)]
    facts += [f"by {c.creator}"] if c.creator else []
    facts += [f"version {c.character_version}"] if c.character_version else []
    facts += [f"tags: {', '.join(c.tags)}"] if c.tags else []
    out.print(safe(c.display_name, "bold"), safe(" · ".join(facts), "dim"), safe(str(c.source), "dim"), sep="\n")
    sections = [
        ("Description", c.description), ("Personality", c.personality), ("Scenario", c.scenario),
        ("First message", c.first_message),
        *((f"Alternate greeting {i}", g) for i, g in enumerate(c.alternate_greetings, 1)),
        ("Example dialogue", c.example_dialogue), ("System prompt", c.system_prompt),
        ("After-history instructions", c.post_history_instructions),
        ("Creator's notes (never sent to the model)", c.creator_notes),
    ]
    for title, body in sections:
        if body.strip():
            out.print()
            out.print(Text(title, style="bold underline"))
            out.print(safe(body.strip()), soft_wrap=True)
    if c.character_book and c.character_book.entries:
        out.print()
        out.print(safe(f"Lorebook{': ' + c.character_book.name if c.character_book.name else ''}", "bold underline"))
        for e in c.character_book.entries:
            when = "always" if e.constant else "keys " + ", ".join(e.keys)
            out.print(Text.assemble("• ", (_lore_label(e), "bold"), inert(f": {when}"), (" (disabled)" if not e.enabled else "", "dim")))


CARD_SUFFIXES = (".png", ".json")


def _card_files(paths: list[Path]) -> tuple[list[Path], list[tuple[Path, str]]]:
    """The card files to import (a folder gives each of its .png and .json files,
    by name), and the files of those folders that are not cards, with why."""
    files: list[Path] = []
    refused: list[tuple[Path, str]] = []
    for path in paths:
        if not path.is_dir():
            files.append(path)
            continue
        try:
            inside = sorted(p for p in path.iterdir() if not p.name.startswith("."))
        except OSError as exc:
            refused.append((path, f"the folder cannot be read ({exc.strerror or exc})"))
            continue
        for item in inside:
            if item.is_dir():
                refused.append((item, "a folder (only the cards directly inside are imported)"))
            elif not item.is_file():  # a FIFO would block the import, a device never end it
                refused.append((item, "not a regular file (a device, FIFO, socket or broken link): skipped"))
            elif item.suffix.lower() in CARD_SUFFIXES:
                files.append(item)
            else:
                refused.append((item, "not a card file (.png or .json)"))
    return files, refused


@app.command("import")
def import_(files: Annotated[list[Path], typer.Argument(help="Card files (.png or .json: Character Card V1, V2 or V3), or folders of them.")]) -> None:
    """Import character cards into your characters folder; a folder imports every card in it."""
    out, err = stdout(), stderr()
    cards, refused = _card_files(files)
    imported = 0
    for path in cards:
        try:
            character = import_card(path)
        except OmoideError as exc:
            refused.append((path, f"{exc.message} {exc.hint}".strip()))
            err.print(Text.assemble(("✗ ", "red"), inert(exc.message), " ", (inert(exc.hint), "dim")), soft_wrap=True)
            continue
        imported += 1
        out.print(Text.assemble(("✓ ", "green"), inert(f"{path} → "), (inert(character.id), "bold"),
                                inert(f" ({character.display_name}). Chat with: omoide chat {character.id}")), soft_wrap=True)
    for path, why in refused:
        if path not in cards:
            err.print(Text.assemble(("✗ ", "red"), inert(f"{path}: {why}")), soft_wrap=True)
    if len(cards) > 1 or any(p.is_dir() for p in files):
        out.print(safe(f"Imported {imported} of {len(cards)} card(s); refused {len(refused)} file(s)."))
    if refused or not cards:
        raise typer.Exit(1)


class CardFormat(str, Enum):
    png = "png"
    json = "json"


@app.command()
def export(
    name: Annotated[str, typer.Argument(help="Character id or name.")],
    format: Annotated[CardFormat, typer.Option("--format", "-f", help="png (with both ccv3 and chara chunks) or json.")] = CardFormat.png,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Where to write (default: ID.png or ID.json here).")] = None,
) -> None:
    """Export a character as a Character Card: V3, with a V2 copy inside PNGs."""
    try:
        character = command_library().find(name, notice=_tell)
        if format is CardFormat.json:
            data = export_card_json(character)
        else:
            image = character.source / "card.png" if character.source else None
            data = export_card_png(character, locations.read_regular(image, MAX_CARD_BYTES) if image and image.is_file() else None)
    except OmoideError as exc:
        fail(exc)
    except OSError as exc:
        fail(CharacterError(f"Cannot read {character.source}/card.png: {exc.strerror or exc}.", "Check its permissions."))
    target = output or Path(f"{character.id}.{format.value}")
    try:
        locations.write_private(target, data, make_parents=False)
    except OSError as exc:
        fail(CharacterError(f"Cannot write {target}: {exc.strerror or exc}.", "Check that the folder exists and is writable."))
    stdout().print(safe(f"Wrote {target} ({len(data):,} bytes)."), soft_wrap=True)


@app.command()
def lore(
    file: Annotated[Path, typer.Argument(help="A lorebook: SillyTavern world info (.json), a card's character_book, or lorebook.toml.")],
    name: Annotated[str | None, typer.Option("--character", "-c", help="Attach it to this character (default: to every chat).")] = None,
) -> None:
    """Attach a standalone lorebook to a character, or to every chat."""
    from omoide.characters.attached import attach_lorebook
    from omoide.characters.lorebook import load_lorebook_file

    try:
        character = command_library().find(name, notice=_tell) if name else None
        target = attach_lorebook(file, character)
        entries = len(load_lorebook_file(target).entries)
    except OmoideError as exc:
        fail(exc)
    who = character.display_name if character else "every chat"
    stdout().print(safe(f"Attached {file} ({entries} entries) to {who}: {target}"), soft_wrap=True)


def _tell(message: str) -> None:
    stderr().print(safe(message, style="yellow"), soft_wrap=True)
