"""The one table of slash commands: each name (as `omoide.tui.command_line` parses it)
and the handler that runs it in the TUI.

A handler sees the app only as a `Host`. Most live in `tui/commands.py`,
`memory_commands.py`, `scene_commands.py` and `memos.py`; the ones whose
screens import more than start-up should pay for (the world's screens, the
model list) are wrapped here, so the import happens on first use but the name
of the module that answers is written next to the command.
"""

from __future__ import annotations

from omoide.tui.command_line import ParsedCommand
from omoide.tui import commands as chat, memory_commands as memory, scene_commands as scene
from omoide.tui.host import Handler, Host
from omoide.tui.memos import memos_command


async def _end(app: Host, command: ParsedCommand) -> None:
    from omoide.tui.screens.world import end_command

    await end_command(app, command)


async def _world(app: Host, command: ParsedCommand) -> None:
    from omoide.tui.screens.world import world_command

    await world_command(app, command)


async def _log(app: Host, command: ParsedCommand) -> None:
    from omoide.tui.screens.log import log_command

    await log_command(app, command)


async def _characters(app: Host, command: ParsedCommand) -> None:
    from omoide.tui.screens.characters import characters_command

    await characters_command(app, command)


async def _models(app: Host, command: ParsedCommand) -> None:
    from omoide.tui.screens.models import models_command

    await models_command(app, command)


TABLE: dict[str, Handler] = {
    "help": chat.help_command,
    "diary": chat.diary_command,
    "summary": chat.summary_command,
    "remember": chat.remember_command,
    "recall": memory.recall_command,
    "profile": memory.profile_command,
    "amnesia": memory.amnesia_command,
    "memos": memos_command,
    "prompt": chat.prompt_command,
    "regen": chat.regen_command,
    "edit": chat.edit_command,
    "undo": chat.undo_command,
    "branch": chat.branch_command,
    "chats": chat.chats_command,
    "new": chat.new_command,
    "rename": chat.rename_command,
    "search": chat.search_command,
    "goto": chat.goto_command,
    "persona": chat.persona_command,
    "characters": _characters,
    "import": chat.import_command,
    "models": _models,
    "invite": scene.invite_command,
    "leave": scene.leave_command,
    "next": scene.next_command,
    "continue": scene.continue_command,
    "end": _end,
    "world": _world,
    "log": _log,
    "quit": chat.quit_command,
}
