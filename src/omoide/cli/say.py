"""`omoide say`: one message, its reply streamed to stdout (for scripts). In a
group scene each reply is printed on its own line, prefixed by its speaker."""

from __future__ import annotations

import sys
from collections.abc import AsyncGenerator
from contextlib import aclosing
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console

from omoide.cli.common import fail, run
from omoide.errors import OmoideError
from omoide.safe_text import inert, safe

if TYPE_CHECKING:
    from omoide.chat.events import TurnEvent
    from omoide.chat.session import ChatSession

app = typer.Typer()
err = Console(stderr=True)


class StreamedText:
    """A reply streamed to stdout, made inert piece by piece; a CR that ends one
    piece is held back in case the next one starts with its LF."""

    def __init__(self) -> None:
        self._held = ""

    def feed(self, delta: str, *, end: bool = False) -> str:
        data, self._held = self._held + delta, ""
        if data.endswith("\r") and not end:
            data, self._held = data[:-1], "\r"
        return inert(data)


@app.command()
def say(
    character: Annotated[str, typer.Argument(help="Character id or name.")],
    message: Annotated[str, typer.Argument(help="What you say. Use - to read it from standard input.")],
    new: Annotated[bool, typer.Option("--new", help="Say it in a new chat.")] = False,
    chat_id: Annotated[int | None, typer.Option("--chat", help="Say it in this chat.")] = None,
    others: Annotated[list[str] | None, typer.Option("--with", help="Another character of the scene (repeatable).")] = None,
    speaker: Annotated[str | None, typer.Option("--speaker", help="Who answers (in a scene; default: who is named, else a weighted draw).")] = None,
    turns: Annotated[int, typer.Option("--turns", min=1, max=20, help="Character turns after your message (a scene's characters talk on).")] = 1,
    persona: Annotated[str | None, typer.Option("--persona", help="Speak as this persona in the chat from now on, as /persona does (`omoide personas list`).")] = None,
) -> None:
    """Send one message and stream the reply to stdout (for scripts).

    Both messages are stored in the character's most recent chat (with --with:
    the most recent scene with exactly those characters), so `omoide chat`
    shows them. In a scene each reply is printed on its own line as
    `NAME: text`. Memory work (summary, diary) finishes before the command exits."""
    from omoide.memory.events import MemoryEvent, MemoryNotice, MemoryWorkDone, MemoryWorkStarted
    from omoide.chat.runtime import Runtime

    def on_memory(event: MemoryEvent) -> None:
        match event:
            case MemoryWorkStarted(kind=kind):
                err.print(f"[dim]Updating memory ({kind})…[/]")
            case MemoryWorkDone(kind=kind):
                err.print(f"[dim]Memory updated ({kind}).[/]")
            case MemoryNotice(note=note):
                err.print(safe(note, "yellow"), soft_wrap=True)

    text = sys.stdin.read() if message == "-" else message
    failed: list[OmoideError] = []

    async def go() -> None:
        runtime = await Runtime.start()
        session = None
        try:
            cast = [runtime.character(o) for o in others or []]
            session = await runtime.session(runtime.character(character), chat_id=chat_id, new=new,
                                            on_memory_event=on_memory, others=cast)
            if persona:
                await session.user.set_persona(persona)
            await _print(session, session.send(text, speaker=speaker), failed)
            for _ in range(turns - 1):
                if failed:
                    break
                await _print(session, session.next_turn(), failed)
            problems = session.last_prompt.tool_problems if session.last_prompt else []
            for problem in problems:
                err.print(safe(f"Note: {problem}", "yellow"), soft_wrap=True)
            await session.wait_for_memory_work(warm_up=False)  # the engine's cache ends with this process
            if session.memory_status:
                err.print(safe(session.memory_status, "yellow"))
        finally:
            # Ctrl+C lands here as a cancellation: the reply is already stored as
            # interrupted; memory work is stopped before the store closes.
            if session is not None:
                await session.aclose()
            await runtime.aclose()

    run(go)
    if failed:
        fail(failed[0])


async def _print(session: ChatSession, turn: AsyncGenerator[TurnEvent, None], failed: list[OmoideError]) -> None:
    from omoide.chat.events import (
        ChangedElsewhere, DiarySaved, ProfileLearned, PromptNotice, ReplyDelta, ReplyFailed, ReplyFinished, ReplyStarted,
    )

    shown = StreamedText()
    started = False
    async with aclosing(turn) as events:
        async for event in events:
            match event:
                case ReplyStarted(message=reply) if session.scene.is_scene:
                    sys.stdout.write(inert(f"{session.scene.speaker_name(reply)}: "))
                case ReplyDelta(text=delta) if session.scene.is_scene:
                    # In a scene, one line per reply: NAME: text.
                    line = delta.replace("\r", " ").replace("\n", " ")
                    sys.stdout.write(shown.feed(line if started else line.lstrip()))
                    started = started or bool(line.strip())
                    sys.stdout.flush()
                case ReplyDelta(text=delta):
                    sys.stdout.write(shown.feed(delta))
                    sys.stdout.flush()
                case DiarySaved(entry=entry):
                    err.print(safe(f"✎ {session.scene.cast.names(session.chat).get(entry.owner or '', session.character.display_name)} wrote in the diary: {entry.content}", "dim"))
                case ProfileLearned(fact=fact, accepted=accepted):
                    then = "added to your profile" if accepted else f"`omoide profile accept {fact.id}` adds it to your profile"
                    err.print(safe(f"{session.character.display_name} learned about you: {fact.content} ({then})", "dim"))
                case ReplyFinished():
                    sys.stdout.write(shown.feed("", end=True) + "\n")
                case ReplyFailed(error=error):
                    failed.append(error)
                case ChangedElsewhere(note=note) | PromptNotice(note=note):
                    err.print(safe(note, "yellow"), soft_wrap=True)
