"""`omoide end`, `omoide world` and `omoide log`: ending a conversation, and
what each character carries out of them.

Model output is printed through rich `Text`, never as markup."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer
from rich.text import Text

from omoide.cli.common import fail, run, stderr, stdout
from omoide.errors import NothingYet
from omoide.memory import templates
from omoide.cli.nothing_yet import no_chat_yet
from omoide.safe_text import safe
from omoide.world.book import WorldBook
from omoide.domain.world import Conversation, Item, Update, UpdateKind, WorldView, is_user
from omoide.world.render import about_name, relationship_lines, update_line, value_lines

if TYPE_CHECKING:
    from omoide.characters.library import Library
    from omoide.chat.runtime import Workspace

out, err = stdout(), stderr()

app = typer.Typer()


@app.command()
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
                from omoide.memory.own_words import own_words
                from omoide.world.keeper import WorldKeeper

                results = await WorldKeeper(runtime.store, runtime.settings.world, runtime.summarizer, user_name=runtime.settings.user.name,
                                            context_size=runtime.settings.backend.context_size,
                                            own_words=own_words(runtime.settings.memory, runtime.summarizer)).sweep()
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
            names = _names(runtime.library, conversation)
            for update in await runtime.store.world.updates(conversation_id=conversation.id):
                out.print(update_line(update, names))
        finally:
            await runtime.aclose()

    run(go)
    for note in templates.take_notices():
        err.print(safe(note, style="yellow"), soft_wrap=True)
    if failed:
        err.print(Text(f"{len(failed)} step(s) failed; the previous memory is kept and they are tried again after your "
                       "next reply, or with `omoide end CHARACTER --retry`:", style="yellow"))
        for line in failed:
            err.print(safe(f"  {line}", style="yellow"))


def _names(library: Library, conversation: Conversation | None = None) -> dict[str, str]:
    """Every character's name by id, from the library's index (no card is read)."""
    names = {c.id: c.display_name for c in library.names()}
    if conversation is not None:
        names.update({p.key: p.name for p in conversation.participants})
    return names


@app.command()
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
            book = WorldBook(workspace.store, _names(workspace.library))
            return char.display_name, await book.view(char.id), await book.pending(char.id), book.names
        finally:
            await workspace.aclose()

    name, view, pending, names = run(go)
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


@app.command("log")
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
            book = WorldBook(workspace.store, _names(workspace.library))
            return char.display_name, await book.log(char.id, limit), await book.edits(char.id), book.names
        finally:
            await workspace.aclose()

    name, rows, edits, names = run(go)
    if not rows and not edits:
        fail(NothingYet(f"{name} has no world memory updates yet.",
                         f"They come when a conversation with {name} ends (/end in the chat, or `omoide end {character}`)."))
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
