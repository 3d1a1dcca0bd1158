"""Slash commands, parsed in one place: what the user typed, as a command name and its arguments."""

from __future__ import annotations

import difflib
import shlex
from dataclasses import dataclass

from omoide.errors import CommandError


@dataclass(frozen=True, slots=True)
class CommandSpec:
    name: str
    usage: str
    summary: str


@dataclass(frozen=True, slots=True)
class ParsedCommand:
    name: str
    args: list[str]
    raw_args: str
    """Everything after the command name, as typed (for free text like /remember)."""


_SPECS = [
    CommandSpec("help", "/help", "List the commands."),
    CommandSpec("diary", "/diary", "Show or hide the character's diary."),
    CommandSpec("summary", "/summary", "Show the summary of the story so far."),
    CommandSpec("remember", "/remember [!] [--importance 1-5] TEXT", "Write a line in the character's diary (! = important)."),
    CommandSpec("recall", "/recall TEXT", "Bring a past moment into the next prompt."),
    CommandSpec("profile", "/profile [add TEXT]", "Show and edit your profile; accept what characters learned."),
    CommandSpec("amnesia", "/amnesia TIER...|off", "Hide memory tiers (diary, summary, memos, world, profile) from this chat."),
    CommandSpec("memos", "/memos", "Open the memo book: jump to, edit, hide or write memos."),
    CommandSpec("prompt", "/prompt", "Inspect the last prompt, layer by layer."),
    CommandSpec("regen", "/regen", "Another reply to your last message (kept as a swipe)."),
    CommandSpec("edit", "/edit TEXT", "Replace your last message with TEXT (the old one stays reachable)."),
    CommandSpec("undo", "/undo", "Step back one exchange."),
    CommandSpec("branch", "/branch save|restore|list|delete NAME", "Save and restore points in the story."),
    CommandSpec("chats", "/chats", "List this character's chats: open, rename, archive."),
    CommandSpec("new", "/new", "Start a new chat with this character."),
    CommandSpec("rename", "/rename TITLE", "Rename this chat."),
    CommandSpec("search", "/search TEXT", "Search the whole chat history."),
    CommandSpec("goto", "/goto DATE|#ID", "Jump to a date (2026-04-01, 04/01) or a message number."),
    CommandSpec("persona", "/persona [NAME]", "Show or switch your persona."),
    CommandSpec("characters", "/characters", "Pick a character to chat with, or import a card."),
    CommandSpec("import", "/import [FILE]", "Import a character card (PNG or JSON)."),
    CommandSpec("models", "/models", "List the models, download a recommended one, switch to another."),
    CommandSpec("invite", "/invite NAME", "Bring a character into this chat (a group scene)."),
    CommandSpec("leave", "/leave NAME", "Let a character leave the scene."),
    CommandSpec("next", "/next [NAME]", "A character speaks without your turn (NAME picks who)."),
    CommandSpec("continue", "/continue [N]", "The characters talk among themselves for N turns (Esc stops)."),
    CommandSpec("end", "/end", "End the conversation: the character remembers it (in the background)."),
    CommandSpec("world", "/world [NAME]", "What the character carries about you and others; edit any of it."),
    CommandSpec("log", "/log [NAME]", "What each conversation changed in the character's memory."),
    CommandSpec("quit", "/quit", "Leave omoide."),
]

COMMANDS: dict[str, CommandSpec] = {spec.name: spec for spec in _SPECS}
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


def unescape(text: str) -> str:
    """'//foo' sends '/foo' as chat text."""
    stripped = text.lstrip()
    return stripped[1:] if stripped.startswith("//") else text


def specs() -> list[CommandSpec]:
    """Every command, in the order /help lists them."""
    return list(_SPECS)


def help_lines() -> list[str]:
    width = max(len(spec.usage) for spec in _SPECS)
    return [f"{spec.usage.ljust(width)}  {spec.summary}" for spec in _SPECS]


def parse_remember(raw: str) -> tuple[int | None, str]:
    """'/remember ! TEXT' (or '!TEXT') is important (5); '--importance N TEXT' says how much."""
    text = raw.strip()
    if text.startswith("!"):
        return 5, text[1:].strip()
    head, _, rest = text.partition(" ")
    if head in ("--importance", "-i") or head.startswith("--importance="):
        value, _, rest = (head.partition("=")[2], "", rest) if "=" in head else rest.strip().partition(" ")
        if not value.isdigit() or not 1 <= int(value) <= 5:
            raise CommandError(f"'{value}' is not an importance.", "Use --importance with a number from 1 (a detail) to 5 (unforgettable).")
        return int(value), rest.strip()
    return None, text
