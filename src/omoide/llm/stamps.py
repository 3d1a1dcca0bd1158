"""The `[04/01 22:15]` prefix every message carries in a prompt: written into
the raw window and the play script, read back where a model imitates it."""

from __future__ import annotations

import re
from datetime import datetime, tzinfo

STAMP = r"\[\d{2}/\d{2} \d{2}:\d{2}\]"
"""The pattern of what `stamp` writes, for text made of stamped lines."""
_LEADING_STAMP = re.compile(rf"^\s*{STAMP}\s*")


def stamp(moment: datetime, tz: tzinfo | None = None) -> str:
    """The `[04/01 22:15]` prefix, in local time (or `tz`)."""
    local = moment.astimezone(tz)  # formatted by hand: strftime takes four times as long, for every message of every prompt
    return f"[{local.month:02}/{local.day:02} {local.hour:02}:{local.minute:02}]"


_IMITATED_STAMP = re.compile(r"^\s*\[\d{1,2}(?:[/.:-]\d{1,4}|st|nd|rd|th)[^\]\n]{0,16}\]:?\s*")
"""What a tiny model makes of the prefix: `[03/12 19h]`, `[5/11/21]`, `[8th October]:`."""
IMITATED_STAMP_CHARS = 24
"""The longest imitation `strip_leading_stamp` takes off (with the space after it)."""


def strip_leading_stamp(text: str) -> str:
    """Models imitate the prefixes they see, some badly; a reply must not start with one."""
    return _IMITATED_STAMP.sub("", text, count=1)


def split_stamp(text: str) -> tuple[str, str]:
    """A message's `[04/01 22:15]` prefix (or "") and the text after it."""
    found = _LEADING_STAMP.match(text)
    return (found.group().strip(), text[found.end():]) if found else ("", text)
