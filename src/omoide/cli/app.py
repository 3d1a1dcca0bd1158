"""The `omoide` command: the root of every command group in cli/, each module's
`app` mounted the one way (`mount`). Heavy imports (Textual, the embedded engine)
happen inside the commands that need them, so `omoide --help` is instant;
`omoide chat` from the command line does not even load the other command groups
(`only_chat`)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from omoide import __version__
from omoide.cli.common import stdout

app = typer.Typer(
    name="omoide",
    help="思い出 omoide: a terminal roleplay client whose characters remember.",
    no_args_is_help=False,
    invoke_without_command=True,
    add_completion=False,
    rich_markup_mode="markdown",
)


@app.callback()
def _root(
    ctx: typer.Context,
    version: Annotated[bool, typer.Option("--version", help="Print the version and exit.")] = False,
) -> None:
    if version:
        stdout().print(f"omoide {__version__}")
        raise typer.Exit()
    if ctx.invoked_subcommand is None:
        stdout().print(ctx.get_help())
        return
    from omoide import locations

    locations.tighten_own_folders()


def only_chat() -> bool:
    """True when this process is `omoide chat ...` run from the command line: the
    other command groups, and all they import, are not needed (40 ms of start-up)."""
    return Path(sys.argv[0]).stem == "omoide" and sys.argv[1:2] == ["chat"]


def mount(chat_only: bool = False) -> None:
    """Mount every command group, one way: each module's `app`, a named group
    (`omoide characters ...`) or top-level commands. `omoide chat` needs only its own."""
    from omoide.cli import chat

    app.add_typer(chat.app)
    if chat_only:
        return
    from omoide.cli import characters, doctor, exchange, memory, memory_check, models, personas, pins, profile, say, templates, world

    for group in (say, memory, exchange, world, characters, personas, profile, pins, models, templates, memory_check, doctor):
        app.add_typer(group.app)


mount(chat_only=only_chat())


def main() -> None:
    app()


if __name__ == "__main__":
    main()
