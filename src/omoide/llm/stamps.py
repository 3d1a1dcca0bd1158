"""The `[04/01 22:15]` prefix every message carries in a prompt: written into
the raw window and the play script, read back where a model imitates it."""

from __future__ import annotations

import re
from datetime import datetime, tzinfo

_LEADING_STAMP = re.compile(r"^\s*\[\d{2}/\d{2} \d{2}:\d{2}\]\s*")


def stamp(moment: datetime, tz: tzinfo | None = None) -> str:
    """The `[04/01 22:15]` prefix, in local time (or `tz`)."""
    local = moment.astimezone(tz)  # formatted by hand: strftime takes four times as long, for every message of every prompt
    return f"[{local.month:02}/{local.day:02} {local.hour:02}:{local.minute:02}]"


def strip_leading_stamp(text: str) -> str:
    """Models imitate the prefixes they see; a reply must not start with one."""
    return _LEADING_STAMP.sub("", text, count=1)


def split_stamp(text: str) -> tuple[str, str]:
    """A message's `[04/01 22:15]` prefix (or "") and the text after it."""
    found = _LEADING_STAMP.match(text)
    return (found.group().strip(), text[found.end():]) if found else ("", text)
