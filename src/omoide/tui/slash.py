"""The one table of slash commands: each command's name, its usage and its one
line of help (what /help shows, in this order), and the handler that runs it.
`parse` reads a typed line against it.

A handler sees the app only as a `Host`. Most live in `tui/commands.py`,
`memory_commands.py`, `scene_commands.py` and `memos.py`; the ones whose
screens import more than start-up should pay for (the world's screens, the
model list) are wrapped here, so the import happens on first use but the name
of the module that answers is written next to the command.
"""

from __future__ import annotations

import difflib
import shlex
from dataclasses import dataclass

from omoide.errors import CommandError
from omoide.tui.command_line import ParsedCommand
from omoide.tui import (
    commands as chat, memory_commands as memory, pin_commands as pins, scene_commands as scene, view_commands as view,
)
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


@dataclass(frozen=True, slots=True)
class SlashCommand:
    name: str
    usage: str
    summary: str
    """One line for /help."""
    run: Handler
    changes_prompt: bool = False
    """What it changes is in the next prompt: /prompt and the status line's count are made again after it."""


TABLE: tuple[SlashCommand, ...] = (
    SlashCommand("help", "/help", "List the commands.", chat.help_command),
    SlashCommand("diary", "/diary", "Show or hide the character's diary.", chat.diary_command),
    SlashCommand("summary", "/summary", "Show the summary of the story so far.", chat.summary_command),
    SlashCommand("remember", "/remember [!] [--importance 1-5] TEXT", "Write a line in the character's diary (! = important).", chat.remember_command, changes_prompt=True),
    SlashCommand("recall", "/recall TEXT", "Bring a past moment into the next prompt.", memory.recall_command, changes_prompt=True),
    SlashCommand("profile", "/profile [add TEXT]", "Show and edit your profile; accept what characters learned.", memory.profile_command, changes_prompt=True),
    SlashCommand("amnesia", "/amnesia TIER...|off", "Hide memory tiers (diary, summary, memos, world, profile, pinned, corrections, passages) from this chat.", memory.amnesia_command, changes_prompt=True),
    SlashCommand("pin", "/pin [TEXT|N|diary N]", "Keep a fact (or message N, or a diary line) in every prompt of the character.", pins.pin_command, changes_prompt=True),
    SlashCommand("pins", "/pins", "List what is pinned for the character.", pins.pins_command),
    SlashCommand("unpin", "/unpin N", "Take pin #N out of the prompts.", pins.unpin_command, changes_prompt=True),
    SlashCommand("memos", "/memos", "Open the memo book: jump to, edit, hide or write memos.", memos_command),
    SlashCommand("prompt", "/prompt", "Inspect the last prompt, layer by layer.", chat.prompt_command),
    SlashCommand("regen", "/regen", "Another reply to your last message (kept as a swipe).", chat.regen_command),
    SlashCommand("edit", "/edit TEXT", "Replace your last message with TEXT (the old one stays reachable).", chat.edit_command),
    SlashCommand("undo", "/undo", "Step back one exchange.", chat.undo_command),
    SlashCommand("branch", "/branch save|restore|list|delete NAME", "Save and restore points in the story.", chat.branch_command),
    SlashCommand("chats", "/chats", "List this character's chats: open, rename, archive.", chat.chats_command),
    SlashCommand("new", "/new", "Start a new chat with this character.", chat.new_command),
    SlashCommand("rename", "/rename TITLE", "Rename this chat.", chat.rename_command),
    SlashCommand("search", "/search TEXT", "Search the whole chat history.", chat.search_command),
    SlashCommand("goto", "/goto DATE|#ID", "Jump to a date (2026-04-01, 04/01) or a message number.", chat.goto_command),
    SlashCommand("persona", "/persona [NAME]", "Show or switch your persona.", chat.persona_command, changes_prompt=True),
    SlashCommand("characters", "/characters", "Pick a character to chat with, or import a card.", _characters),
    SlashCommand("import", "/import [FILE]", "Import a character card (PNG or JSON).", chat.import_command),
    SlashCommand("models", "/models", "List the models, download a recommended one, switch to another.", _models),
    SlashCommand("invite", "/invite NAME", "Bring a character into this chat (a group scene).", scene.invite_command, changes_prompt=True),
    SlashCommand("leave", "/leave NAME", "Let a character leave the scene.", scene.leave_command, changes_prompt=True),
    SlashCommand("next", "/next [NAME]", "A character speaks without your turn (NAME picks who).", scene.next_command),
    SlashCommand("continue", "/continue [N]", "The characters talk among themselves for N turns (Esc stops).", scene.continue_command),
    SlashCommand("end", "/end", "End the conversation: the character remembers it (in the background).", _end),
    SlashCommand("world", "/world [NAME]", "What the character carries about you and others; edit any of it.", _world),
    SlashCommand("log", "/log [NAME]", "What each conversation changed in the character's memory.", _log),
    SlashCommand("copy", "/copy [code]", "Copy the last reply (code: its last code block) to the clipboard.", view.copy_command),
    SlashCommand("theme", "/theme [NAME]", "List the themes, or use one (remembered).", view.theme_command),
    SlashCommand("quit", "/quit", "Leave omoide.", chat.quit_command),
)
COMMANDS: dict[str, SlashCommand] = {command.name: command for command in TABLE}
ALIASES = {"exit": "quit", "q": "quit", "h": "help", "?": "help", "swipe": "regen", "retry": "regen"}


def nearest(name: str) -> str | None:
    candidates = [*COMMANDS, *ALIASES]
    match = difflib.get_close_matches(name, candidates, n=1, cutoff=0.5)
    if match:
        return ALIASES.get(match[0], match[0])
    prefixed = [c for c in COMMANDS if c.startswith(name[:2])] if name else []
    return prefixed[0] if prefixed else None


def parse(text: str) -> ParsedCommand | None:
    """None for plain chat text. A line starting with '//' sends a literal '/'."""
    stripped = text.strip()
    if not stripped.startswith("/") or stripped.startswith("//"):
        return None
    head, _, rest = stripped[1:].partition(" ")
    name = head.lower()
    if not name:
        raise CommandError("A lone '/' is not a command.", "Type /help to see the commands.")
    name = ALIASES.get(name, name)
    if name not in COMMANDS:
        suggestion = nearest(name)
        if suggestion == "help" or not suggestion:
            hint = "Did you mean /help? It lists them all." if suggestion else "/help lists them all."
        else:
            hint = f"Did you mean /{suggestion}? /help lists them all."
        raise CommandError(f"Unknown command /{head}.", hint)
    try:
        args = shlex.split(rest)
    except ValueError:
        args = rest.split()
    return ParsedCommand(name=name, args=args, raw_args=rest.strip())


def help_rows() -> list[tuple[str, str]]:
    """(usage, what it does) of every command, in the table's order."""
    return [(command.usage, command.summary) for command in TABLE]
