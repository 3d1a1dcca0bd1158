"""The group-scene slash commands: /invite, /leave, /next, /continue (named in `tui/slash.py`)."""

from __future__ import annotations

from typing import Literal

from omoide.tui.command_line import ParsedCommand
from omoide.chat.scene import CONTINUE_MAX
from omoide.tui.host import Host


def _busy(app: Host) -> bool:
    if app.turn_running:
        app.notify("A reply is still coming; press Esc to stop it first.", severity="warning")
        return True
    return False


async def invite_command(app: Host, command: ParsedCommand) -> None:
    await _change_cast(app, command, "invite")


async def leave_command(app: Host, command: ParsedCommand) -> None:
    await _change_cast(app, command, "leave")


async def _change_cast(app: Host, command: ParsedCommand, change: Literal["invite", "leave"]) -> None:
    if not command.raw_args:
        app.notify(f"Usage: /{change} NAME", severity="warning")
        return
    if _busy(app):
        return
    if change == "invite":
        note = await app.session.scene.invite(command.raw_args)
        told = f"{note.content} /next lets someone speak; name a character to speak to them."
    else:
        note = await app.session.scene.leave(command.raw_args)
        told = note.content
    await app.show_chat()
    app.notify(told, timeout=4)


async def next_command(app: Host, command: ParsedCommand) -> None:
    if _busy(app):
        return
    name = command.raw_args or None
    if name:
        app.session.scene.check_speaker(name)  # a clear notice now, not a failed turn
    app.run_turn(lambda: app.session.next_turn(name))


async def continue_command(app: Host, command: ParsedCommand) -> None:
    if _busy(app):
        return
    raw = command.raw_args or "3"
    if not raw.isdigit():
        app.notify(f"'{raw}' is not a number of turns. Usage: /continue [N]", severity="warning")
        return
    turns = int(raw)
    if not 1 <= turns <= CONTINUE_MAX:
        app.notify(f"/continue takes 1 to {CONTINUE_MAX} turns.", severity="warning")
        return
    app.run_turn(lambda: app.session.continue_turns(turns))
    app.notify(f"The characters talk among themselves for {turns} turn(s); Esc stops them.", timeout=3)
