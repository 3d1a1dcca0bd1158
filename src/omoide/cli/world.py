"""`omoide end`, `omoide world`, `omoide log` and `omoide templates`.

Model output is printed through rich `Text`, never as markup."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Annotated, TypeVar

import typer
from rich.console import Console
from rich.text import Text

import omoide.memory.diary  # noqa: F401 - these register their templates
import omoide.memory.summary  # noqa: F401
import omoide.world.steps  # noqa: F401
from omoide.memory import templates
from omoide.errors import NothingYet, OmoideError
from omoide.cli.nothing_yet import no_chat_yet
from omoide.safe_text import safe
from omoide.world.book import WorldBook
from omoide.domain.world import SELF, Conversation, Item, Update, UpdateKind, WorldView, is_user
from omoide.world.render import about_name, relationship_lines, update_line, value_lines

if TYPE_CHECKING:
    from omoide.chat.runtime import Workspace

T = TypeVar("T")
out = Console()
err = Console(stderr=True)

templates_app = typer.Typer(help="List, edit and reset the prompt templates of the memory steps.", no_args_is_help=True)


Runner = Callable[[Callable[[], Awaitable[object]]], object]
_hooks: dict[str, Callable[..., object]] = {}


def register(app: typer.Typer, *, run: Callable[..., object], fail: Callable[[OmoideError], object]) -> None:
    """Add the commands to `app`; `run` and `fail` are the main CLI's (how it runs
    a coroutine and reports an error), passed in so this module never imports it."""
    _hooks.update(run=run, fail=fail)
    app.command("end")(end)
    app.command("world")(world)
    app.command("log")(log_command)
    app.add_typer(templates_app, name="templates", help="List, edit and reset the prompt templates of the memory steps.")


def _run(coro_factory: Callable[[], Awaitable[T]]) -> T:
    return _hooks["run"](coro_factory)  # type: ignore[return-value]


def end(
    character: Annotated[str, typer.Argument(help="Character id or name.")],
    chat_id: Annotated[int | None, typer.Option("--chat", help="Which chat (default: the most recent).")] = None,
    retry: Annotated[bool, typer.Option("--retry", help="Do not end anything: run again the passes that failed or were cut off.")] = False,
) -> None:
    """End the conversation in a chat now, and let the character remember it.

    Runs the end-of-conversation updates (summary, memory of you, goal,
    descriptor, familiarity, gossip, global memory) and waits for them."""
    from omoide.chat.runtime import Runtime

    failed: list[str] = []

    async def go() -> None:
        runtime = await Runtime.start()
        try:
            char = runtime.character(character)
            if retry:
                from omoide.world.keeper import WorldKeeper

                results = await WorldKeeper(runtime.store, runtime.settings.world, runtime.summarizer, user_name=runtime.settings.user.name,
                                            context_size=runtime.settings.backend.context_size).sweep()
                failed.extend(f for r in results for f in r.failed)
                out.print(f"Ran {len(results)} unfinished pass(es).")
                return
            # The newest chat the character is in: its own, or a scene it is part of.
            chat = await runtime.store.chats.get(chat_id) if chat_id else next(
                (c for c in await runtime.store.chats.list() if char.id in c.participants), None)
            if chat is None:
                raise no_chat_yet(char)
            session = await runtime.session(runtime.character(chat.character), chat_id=chat.id)
            conversation = await session.end_conversation(background=False)
            out.print(safe(f"Conversation #{conversation.id} ended (messages #{conversation.first_id}–#{conversation.end_id}). "
                           f"{' and '.join(p.name for p in conversation.characters)} "
                           f"{'is' if len(conversation.characters) == 1 else 'are'} remembering it…"))
            result = await session.world.run(conversation.id)
            failed.extend(result.failed)
            for update in await runtime.store.world.updates(conversation_id=conversation.id):
                out.print(update_line(update, _names(conversation)))
        finally:
            await runtime.aclose()

    _run(go)
    for note in templates.take_notices():
        err.print(safe(note, style="yellow"), soft_wrap=True)
    if failed:
        err.print(Text(f"{len(failed)} step(s) failed; the previous memory is kept and they are tried again after your "
                       "next reply, or with `omoide end CHARACTER --retry`:", style="yellow"))
        for line in failed:
            err.print(safe(f"  {line}", style="yellow"))


def _names(conversation: Conversation | None = None) -> dict[str, str]:
    from omoide.characters.library import list_characters

    names = {c.id: c.display_name for c in list_characters()}
    if conversation is not None:
        names.update({p.key: p.name for p in conversation.participants})
    return names


def world(
    character: Annotated[str, typer.Argument(help="Character id or name.")],
    about: Annotated[str | None, typer.Option("--about", help="Only the relationship with this character (or your name).")] = None,
) -> None:
    """Print what a character carries: global memory, and per relationship the
    descriptor, familiarity, goal, consolidated memory, rolling summaries and
    what it heard from others."""
    from omoide.chat.runtime import Workspace

    async def go() -> tuple[str, WorldView, int, dict[str, str]]:
        workspace: Workspace = await Workspace.open()
        try:
            char = workspace.character(character)
            book = WorldBook(workspace.store, _names())
            return char.display_name, await book.view(char.id), await book.pending(char.id), book.names
        finally:
            await workspace.aclose()

    name, view, pending, names = _run(go)
    out.print(safe(f"{name}: what {name} carries", style="bold"))
    if pending:
        out.print(Text(f"({pending} conversation(s) not yet fully remembered: they finish after the next reply, "
                       "or with `omoide end CHARACTER --retry`.)", style="yellow"))
    out.print(Text("\nGlobal memory", style="bold"))
    out.print(safe(view.global_memory or "(nothing yet)"))
    out.print(Text("\nRecent conversations", style="bold"))
    _items(view.summaries)
    relationships = list(view.relationships.values())
    if about:
        wanted = about.casefold()
        relationships = [r for r in relationships if wanted in (r.about.casefold(), about_name(r.about, names).casefold(),
                                                                 r.about.removeprefix("user:").casefold())]
    if not relationships:
        out.print(Text(f"\nNo relationships yet{' matching ' + repr(about) if about else ''}. "
                       "They form when a conversation ends (/end, or `omoide end`).", style="dim"))
    for rel in sorted(relationships, key=lambda r: (not is_user(r.about), r.about)):
        out.print()
        for label, text in relationship_lines(rel, names):
            if label is None:
                out.print(safe(str(text), style="bold"))
            elif isinstance(text, list):
                out.print(Text(f"  {label}:"))
                _items(text, indent=4)
            else:
                out.print(safe(f"  {label}: {text}"))


def _items(items: list[Item], indent: int = 2) -> None:
    if not items:
        out.print(Text(" " * indent + "(none yet)", style="dim"))
    for item in items:
        tag = f"#{item.conversation_id} " if item.conversation_id else ""
        out.print(safe(" " * indent + f"- {tag}{item.text}"))


def log_command(
    character: Annotated[str, typer.Argument(help="Character id or name.")],
    limit: Annotated[int, typer.Option(help="Most conversations to show.")] = 20,
    full: Annotated[bool, typer.Option("--full", help="Show whole texts, not the first lines.")] = False,
) -> None:
    """The memory update log: every update each conversation caused, before and
    after, with the template and the model; and the edits made by hand."""
    from omoide.chat.runtime import Workspace

    async def go() -> tuple[str, list[tuple[Conversation, list[Update]]], list[Update], dict[str, str]]:
        workspace: Workspace = await Workspace.open()
        try:
            char = workspace.character(character)
            book = WorldBook(workspace.store, _names())
            return char.display_name, await book.log(char.id, limit), await book.edits(char.id), book.names
        finally:
            await workspace.aclose()

    name, rows, edits, names = _run(go)
    if not rows and not edits:
        _fail(NothingYet(f"{name} has no world memory updates yet.",
                         f"They come when a conversation with {name} ends (/end in the chat, or `omoide end {character}`)."))
        return
    for conversation, updates in rows:
        force = "" if conversation.in_force else " · retracted (its end is off the chat's path)"
        out.print(Text(f"Conversation #{conversation.id} · chat #{conversation.chat_id}, messages "
                       f"#{conversation.first_id}–#{conversation.end_id} · ended {conversation.ended_at.astimezone():%Y-%m-%d %H:%M} "
                       f"({conversation.reason}) · {conversation.state}{force}", style="bold"))
        for update in updates:
            out.print(update_line(update, names))
            if update.kind is not UpdateKind.FAILED:
                _before_after(update, full)
        out.print()
    if edits:
        out.print(Text("Edits by hand", style="bold"))
        for update in edits:
            out.print(update_line(update, names))
            _before_after(update, full)


def _before_after(update: Update, full: bool) -> None:
    """An update's value before and after, wrapped to the terminal under its label."""
    from rich.padding import Padding

    for label, value, style in (("before:", update.before, "dim"), ("after:", update.after, "")):
        out.print(Text(f"      {label}", style=style or "bold"))
        body = Text("\n".join(value_lines(update.field, value, full)), style=style)
        out.print(Padding(body, (0, 0, 0, 8)))


@templates_app.command("list")
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


@templates_app.command("show")
def templates_show(name: Annotated[str, typer.Argument(help="Template name, e.g. world.goal.")]) -> None:
    """Print the template in force and the placeholders it may use."""
    try:
        template = templates.get(name)
    except OmoideError as exc:
        _fail(exc)
    out.print(Text(f"{name} ({template.source}); placeholders: " + ", ".join("{" + p + "}" for p in template.spec.placeholders),
                   style="bold"))
    out.print(safe(template.text))


@templates_app.command("edit")
def templates_edit(name: Annotated[str, typer.Argument(help="Template name, e.g. world.goal.")]) -> None:
    """Open your copy of a template in $EDITOR (made from the default the first time)."""
    try:
        edited = templates.edit(name)
    except OmoideError as exc:
        _fail(exc)
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


@templates_app.command("reset")
def templates_reset(name: Annotated[str, typer.Argument(help="Template name, e.g. world.goal.")]) -> None:
    """Go back to the shipped default; your copy is kept beside it, renamed."""
    try:
        kept = templates.reset(name)
    except OmoideError as exc:
        _fail(exc)
    out.print(Text(f"{name} is the shipped default again." + (f" Your copy was kept as {kept}." if kept else " (It already was.)")))


def _fail(exc: OmoideError) -> None:
    _hooks["fail"](exc)


__all__ = ["SELF", "register", "templates_app"]
