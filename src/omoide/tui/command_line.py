"""What a slash-command handler is given: the command as typed (`ParsedCommand`,
made by `tui.slash.parse` against the command table), and the parsing a handler
shares (`unescape`, `parse_remember`)."""

from __future__ import annotations

from dataclasses import dataclass

from omoide.errors import CommandError


@dataclass(frozen=True, slots=True)
class ParsedCommand:
    name: str
    args: list[str]
    raw_args: str
    """Everything after the command name, as typed (for free text like /remember)."""


def unescape(text: str) -> str:
    """'//foo' sends '/foo' as chat text."""
    stripped = text.lstrip()
    return stripped[1:] if stripped.startswith("//") else text


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
