"""Console output shared by the CLI's command groups.

Error messages carry server text, file names and card fields: they are printed
through `safe_text`, never as markup and never as escape sequences."""

from __future__ import annotations

from typing import NoReturn

import typer
from rich.console import Console
from rich.text import Text

from omoide.errors import NothingYet, OmoideError
from omoide.safe_text import safe


def stdout() -> Console:
    return Console(highlight=False)


def stderr() -> Console:
    return Console(stderr=True, highlight=False)


def fail(exc: OmoideError) -> NoReturn:
    """Print the error and its hint to stderr and exit with status 1; for
    `NothingYet`, say what there is not yet and what to do, and exit 0."""
    err = stderr()
    if isinstance(exc, NothingYet):
        err.print(safe(exc.message), soft_wrap=True)
        if exc.hint:
            err.print(safe(exc.hint, "dim"), soft_wrap=True)
        raise typer.Exit(0)
    err.print(Text.assemble(("Error: ", "bold red"), safe(exc.message)), soft_wrap=True)
    if exc.hint:
        err.print(safe(exc.hint, "dim"), soft_wrap=True)
    raise typer.Exit(1)
