"""`omoide pins CHARACTER`: the facts pinned to a character's every prompt; --add and --remove."""

from __future__ import annotations

from typing import Annotated

import typer

from omoide.cli.common import run, stdout
from omoide.safe_text import safe

app = typer.Typer()
out = stdout()


@app.command()
def pins(
    character: Annotated[str, typer.Argument(help="Character id or name.")],
    add: Annotated[str | None, typer.Option("--add", help="Pin this fact: it is in every prompt of the character.")] = None,
    remove: Annotated[int | None, typer.Option("--remove", help="Take pin N out of the prompts (it is kept, not deleted).")] = None,
) -> None:
    """List the facts pinned for a character (every prompt of it holds them, whatever is compressed)."""
    from omoide.chat.pins import add_pin, remove_pin
    from omoide.chat.runtime import Workspace
    from omoide.memory.prompt.budget import PINS_PERCENT, pins_sent

    async def go() -> None:
        workspace = await Workspace.open()
        try:
            char = workspace.character(character)
            if add is not None:
                pin = await add_pin(workspace.store, char.id, add)
                out.print(safe(f"Pinned #{pin.id} for {char.display_name}: {pin.content}"))
            if remove is not None:
                pin = await remove_pin(workspace.store, char.id, remove)
                out.print(safe(f"Unpinned #{pin.id}: {pin.content}"))
            if add is None and remove is None:
                listed = await workspace.store.pins.list(char.id)
                if not listed:
                    out.print(safe(f"Nothing is pinned for {char.display_name}. `omoide pins {char.id} --add TEXT` pins a fact."))
                _, left = pins_sent([pin.content for pin in listed], workspace.settings.backend.context_size)
                if left:
                    out.print(safe(f"{left:,} of the {len(listed):,} pins are not sent, the oldest (marked): pins may take "
                                   f"{PINS_PERCENT}% of the context."))
                for n, pin in enumerate(listed):
                    unsent = ", not sent" if n < left else ""
                    out.print(safe(f"#{pin.id}  {pin.content}  ({pin.source}, {pin.created_at.astimezone():%Y-%m-%d}{unsent})"))
        finally:
            await workspace.aclose()

    run(go)
