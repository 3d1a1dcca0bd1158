"""Tier 1: the recent messages, verbatim and timestamped."""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime, tzinfo

from omoide.domain import Message, Role

STAMP_FORMAT = "[%m/%d %H:%M]"
_LEADING_STAMP = re.compile(r"^\s*\[\d{2}/\d{2} \d{2}:\d{2}\]\s*")


def stamp(moment: datetime, tz: tzinfo | None = None) -> str:
    """The `[04/01 22:15]` prefix, in local time (or `tz`)."""
    return moment.astimezone(tz).strftime(STAMP_FORMAT)


def speaker_label(message: Message, name: str, user: str, names: Mapping[str, str] | None = None) -> str:
    """Who wrote `message`, for a summary or memo request: the user, or in a group
    scene the character stored on it (`names`: id -> name), else `name`."""
    if message.role is Role.USER:
        return user
    return (names or {}).get(message.speaker or "", name)


def strip_leading_stamp(text: str) -> str:
    """Models imitate the prefixes they see; a reply must not start with one."""
    return _LEADING_STAMP.sub("", text, count=1)


def split_stamp(text: str) -> tuple[str, str]:
    """A message's `[04/01 22:15]` prefix (or "") and the text after it."""
    found = _LEADING_STAMP.match(text)
    return (found.group().strip(), text[found.end():]) if found else ("", text)
