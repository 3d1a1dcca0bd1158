"""`omoide profile ...`: the user profile every character knows."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated, TypeVar

import typer
from rich.console import Console
from rich.text import Text

from omoide import locations
from omoide.cli.common import fail, run
from omoide.config.editor import open_in_editor
from omoide.domain.chat import Profile
from omoide.errors import OmoideError
from omoide.world.profile import ProfileBook, provenance, render_text
from omoide.safe_text import safe

T = TypeVar("T")
app = typer.Typer(name="profile", invoke_without_command=True, help="Show and edit your profile: what every character knows about you.")


def _run(work: Callable[[ProfileBook], Awaitable[T]]) -> T:
    """Run `work` on the profile book of the store."""
    from omoide.chat.runtime import Workspace

    async def go() -> T:
        workspace = await Workspace.open()
        try:
            return await work(ProfileBook(workspace.store, workspace.settings.memory.profile_learning))
        finally:
            await workspace.aclose()

    return run(go)


@app.callback()
def show(ctx: typer.Context) -> None:
    """Print your profile and the facts characters learned that wait for you."""
    if ctx.invoked_subcommand is not None:
        return
    async def read(book: ProfileBook) -> tuple[Profile, set[int]]:
        profile = await book.get()
        return profile, await book.left_behind(profile.facts)

    profile, left = _run(read)
    out = Console(highlight=False)
    out.print(safe(render_text(profile, header=False)))
    if left:
        out.print(Text("Learned on a path its chat has left: in no prompt until /branch restore brings that path back:", style="bold"))
        for fact in profile.facts:
            if fact.id in left:
                out.print(safe(f"  #{fact.id}  {fact.content}  ({provenance(fact)})"))
    if profile.proposals:
        out.print(Text("Learned by characters, waiting for you (omoide profile accept|reject ID):", style="bold"))
        for fact in profile.proposals:
            out.print(safe(f"  #{fact.id}  {fact.content}  ({provenance(fact)})"))


@app.command()
def add(text: Annotated[str, typer.Argument(help='A fact, e.g. "allergic to cats".')]) -> None:
    """Add a fact to your profile."""
    fact = _run(lambda book: book.add(text))
    Console(highlight=False).print(safe(f"Added #{fact.id}: {fact.content}. Every character knows it now."))


@app.command()
def edit() -> None:
    """Open your profile in $EDITOR; what you save is what every character knows."""
    before = render_text(_run(lambda book: book.get()))
    draft = locations.data_dir() / "profile-edit.txt"
    locations.write_private(draft, before)
    try:
        open_in_editor(draft)
        after = draft.read_text(encoding="utf-8")
    except OmoideError as exc:
        fail(exc)
    finally:
        draft.unlink(missing_ok=True)
    if after == before:
        Console(highlight=False).print("No changes.")
        return
    try:
        _run(lambda book: book.save_text(after))
    except typer.Exit:
        kept = locations.data_dir() / "profile-unsaved.txt"
        locations.write_private(kept, after)
        Console(stderr=True, highlight=False).print(safe(f"Your edit is kept in {kept}; fix it and paste it back with `omoide profile edit`."))
        raise
    Console(highlight=False).print("Profile saved. Every character knows it from the next message on.")


@app.command()
def accept(fact_id: Annotated[int, typer.Argument(help="The number `omoide profile` shows.")]) -> None:
    """Accept a fact a character learned about you: every character knows it from now on."""
    fact = _run(lambda book: book.decide(fact_id, True))
    Console(highlight=False).print(safe(f"Added to your profile: {fact.content}"))


@app.command()
def reject(fact_id: Annotated[int, typer.Argument(help="The number `omoide profile` shows.")]) -> None:
    """Reject a fact a character learned about you (it is kept as rejected, never shown to characters)."""
    fact = _run(lambda book: book.decide(fact_id, False))
    Console(highlight=False).print(safe(f"Rejected: {fact.content}"))
