"""What the keys on a focused message do (message selection: Ctrl+Up in the chat,
then ↑/↓ or k/j). Each action is a method of a session part (`session.tree`,
`session.edit_message`, `session.regenerate_from`), so `omoide say` and tests do
the same without the TUI; here they are asked for, shown and confirmed.

Edit opens the message in an editor; delete and branch move the head at once
(nothing leaves the tree: the messages after the one acted on are kept on an
`auto-<time>` branch, and the notice names it); regenerate runs a turn.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from textual.binding import Binding

from omoide.chat.events import MessageRewritten, TurnEvent, UserMessageStored
from omoide.domain.chat import Message, Role
from omoide.errors import OmoideError
from omoide.tui.clipboard import copy_text
from omoide.tui.commands import ordinal
from omoide.tui.host import Host, report
from omoide.tui.screens.prompt_input import InputModal
from omoide.tui.screens.text_edit import TextEditScreen
from omoide.tui.widgets.message import Action


class MessageEditor(TextEditScreen):
    """Edit one message of the chat: Ctrl+S keeps the new text (as a new version)."""

    DEFAULT_CSS = """
    MessageEditor { align: center middle; }
    MessageEditor > Vertical { width: 90%; max-width: 110; height: 16; border: round $accent; background: $surface; padding: 1 2; }
    MessageEditor TextArea { height: 1fr; }
    MessageEditor .hint { color: $text-muted; }
    """
    BINDINGS = [
        Binding("ctrl+s", "save", "Save", id="message_editor.save", priority=True),
        Binding("escape", "cancel", "Cancel", id="message_editor.cancel"),
    ]
    HINT = "Ctrl+S saves it as a new version (the old one is kept) · Esc cancels"
    TEXT_ID = "message-text"


def _who(app: Host, message: Message) -> str:
    return "your" if message.role is Role.USER else f"{app.session.scene.speaker_name(message)}'s"


def _kept(name: str | None) -> str:
    return f" What came after it is kept on the branch '{name}' (/branch restore {name})." if name else ""


async def act(app: Host, message: Message, action: Action) -> None:
    """Run `action` on `message` (a message shown on the path)."""
    if action == "copy":
        app.notify(copy_text(app, message.content, f"{_who(app, message)} message"), timeout=3)
        return
    if action == "leave":
        app.leave_selection()
        return
    if app.turn_running:
        app.notify("A reply is still coming; press Esc in the composer to stop it first.", severity="warning")
        return
    try:
        if action == "edit":
            _edit(app, message)
        elif action == "regenerate":
            app.leave_selection()
            app.run_turn(lambda: app.session.regenerate_from(message.id))
        elif action == "delete":
            head, kept = await app.session.tree.delete(message.id)
            app.leave_selection()
            await app.show_chat()
            back = (f" Nothing is lost: /branch restore {kept.name} brings it back, with what came after it."
                    if kept else "")
            app.notify(f"Took {_who(app, message)} message off this path; the chat goes on from its "
                       f"{ordinal(head.depth + 1)} message.{back}", timeout=10)
        elif action == "branch":
            _branch(app, message)
    except OmoideError as exc:
        report(app, exc, "Message")


def _edit(app: Host, message: Message, typed: str | None = None) -> None:
    """Open the editor on `message` (on `typed`, the text of an edit that could not be stored)."""
    async def edited(text: str | None) -> None:
        if text is None or text.strip() == message.content.strip():
            return
        app.leave_selection()
        app.run_turn(lambda: _stored_or_reopened(app, message, text))

    app.push_screen(MessageEditor(f"Edit {_who(app, message)} message #{message.id}", typed or message.content), edited)


async def _stored_or_reopened(app: Host, message: Message, text: str) -> AsyncIterator[TurnEvent]:
    """The edit's turn; if the new version cannot be stored (a full disk), the
    editor opens again on what was typed, beside the notice the failure gives."""
    stored = False
    try:
        async for event in app.session.edit_message(message.id, text):
            stored = stored or isinstance(event, (MessageRewritten, UserMessageStored))
            yield event
    except OmoideError:
        if not stored:
            _edit(app, message, text)
        raise


def _branch(app: Host, message: Message) -> None:
    async def named(name: str | None) -> None:
        if name is None:
            return
        try:
            branch, saved = await app.session.tree.branch_from(message.id, name)
        except OmoideError as exc:
            report(app, exc, "Branch")
            return
        app.leave_selection()
        await app.show_chat()
        app.notify(f"The branch '{branch.name}' starts at message #{message.id}; the chat (and its memory) goes on from there."
                   f"{_kept(saved.name if saved else None)}", timeout=8)

    app.push_screen(InputModal(f"Name the branch that starts at message #{message.id}:", f"from-{message.id}"), named)
