"""`/copy` and `/theme`: the last reply (or the last code block in it) to the
clipboard, and Textual's themes by name, remembered in the config file."""

from __future__ import annotations

from omoide.errors import CommandError
from omoide.tui.clipboard import copy_text, last_code_block
from omoide.tui.command_line import ParsedCommand
from omoide.tui.host import Host

RECENT = 20
"""Messages of the path looked through for the last reply."""


async def copy_command(app: Host, command: ParsedCommand) -> None:
    what = command.raw_args.lower()
    if what not in ("", "code"):
        raise CommandError(f"/copy does not know '{command.raw_args}'.", "/copy copies the last reply, /copy code the last code block in it.")
    path = await app.session.transcript(limit=RECENT)
    reply = next((m for m in reversed(path) if m.role == "assistant"), None)
    if reply is None or not reply.content:
        raise CommandError("There is no reply to copy yet.", "Send a message first; /copy then copies the reply.")
    if what == "code":
        code = last_code_block(reply.content)
        if code is None:
            raise CommandError("The last reply has no code block.", "/copy copies the whole reply.")
        app.notify(copy_text(app, code, "the last code block"), timeout=4)
        return
    app.notify(copy_text(app, reply.content, "the last reply"), timeout=4)


async def theme_command(app: Host, command: ParsedCommand) -> None:
    if not command.raw_args:
        names = ", ".join(app.theme_names())
        app.notify(f"Themes: {names}. /theme NAME uses one (the palette finds them too).", timeout=8)
        return
    app.choose_theme(command.raw_args.strip())
