"""The TUI's hooks for the memo book: `/memos` and its key open the book, Enter
on a memo jumps the transcript to its batch and marks the message, and /search
rows for memos."""

from __future__ import annotations

from omoide.tui.command_line import ParsedCommand
from omoide.errors import OmoideError
from omoide.memory.events import MemoryEvent, MemoryWorkDone, MemoryWorkFailed
from omoide.tui.host import Host, report
from omoide.tui.widgets.status import MEMORY_IDLE

FOUND = "found"
"""The class on the message a jump from the book landed on."""


async def open_book(app: Host) -> None:
    from omoide.tui.screens.memos import MemoBookScreen

    style = app.session.settings.memory.style
    note = "" if style in ("memos", "both") else f" (memory_style is '{style}': memos are kept here but not sent to the model)"

    async def chosen(message_id: int | None) -> None:
        if message_id is not None:
            await jump_and_mark(app, message_id)

    app.push_screen(MemoBookScreen(app.session.book, f"{app.session.character.display_name}'s memo book", note=note), chosen)


async def jump_and_mark(app: Host, message_id: int) -> None:
    """Show the page of the transcript that holds `message_id` (the existing
    paging: one page of the path around it), scrolled to it and marked."""
    head = (await app.session.refresh()).head_id
    if head is None:
        return
    try:
        message = await app.session.navigator.locate(message_id, head)
    except OmoideError as exc:
        report(app, exc, "Memo book")
        return
    for view in app.transcript.query(f".{FOUND}"):
        view.remove_class(FOUND)
    await app.transcript.show_around(head, message)
    for view in app.transcript.query(f"#msg-{message_id}"):
        view.add_class(FOUND)
    app.notify(f"Message #{message.id}, {message.created_at.astimezone():%Y-%m-%d %H:%M}. Ctrl+End goes back to the end.", timeout=4)


async def memos_command(app: Host, command: ParsedCommand) -> None:
    await open_book(app)


async def memo_rows(app: Host, query: str) -> list[tuple[int, str, str, str, str]]:
    """/search rows for the memos that match: Enter jumps to the memo's batch."""
    hits = await app.session.book.search(query)
    return [(h.memo.jump_id, f"{h.memo.updated_at.astimezone():%Y-%m-%d %H:%M}", f"memo {h.memo.span}", "memo book", h.snippet)
            for h in hits]


def memo_status(event: MemoryEvent) -> str | None:
    """The status bar's memory label for a memo event (None: not a memo event)."""
    match event:
        case MemoryWorkFailed(kind="memo", reason=reason):
            return f"memo gap: {reason} — r in /memos retries"
        case MemoryWorkDone(kind="memo"):
            return MEMORY_IDLE
    return None
