"""Server-sent events parsed from raw bytes.

Bytes are buffered and split on blank lines before anything is decoded, so a
multi-byte UTF-8 character split across network chunks is never corrupted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_EVENT_END = re.compile(rb"\r\n\r\n|\n\n|\r\r|\r\n\n|\n\r\n")
_LINE = re.compile(r"\r\n|\n|\r")
_LONGEST_END = 4
_BOM = "\ufeff"


@dataclass(frozen=True, slots=True)
class SSEEvent:
    data: str
    event: str = "message"
    id: str | None = None


class SSEParser:
    """Incremental: `feed` each network chunk, `close` at the end of the body."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._scanned = 0
        self._started = False

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        self._buffer += chunk
        events: list[SSEEvent] = []
        while True:
            # Resume where the last search stopped (minus a possibly split
            # terminator), so a stream fed byte by byte stays linear.
            match = _EVENT_END.search(self._buffer, max(0, self._scanned - _LONGEST_END + 1))
            if match is None:
                self._scanned = len(self._buffer)
                return events
            raw = bytes(self._buffer[: match.start()])
            del self._buffer[: match.end()]
            self._scanned = 0
            event = self._parse(raw)
            if event is not None:
                events.append(event)

    def close(self) -> list[SSEEvent]:
        """End of stream: a final event without its blank line still counts."""
        raw = bytes(self._buffer)
        self._buffer.clear()
        self._scanned = 0
        event = self._parse(raw) if raw.strip() else None
        return [event] if event is not None else []

    def _parse(self, raw: bytes) -> SSEEvent | None:
        text = raw.decode("utf-8", errors="replace")
        if not self._started:
            self._started = True
            text = text.removeprefix(_BOM)
        return parse_event(text)


def parse_event(text: str) -> SSEEvent | None:
    """One event's lines -> an event, or None when it carries no data."""
    data: list[str] = []
    kind, ident = "message", None
    for line in _LINE.split(text):
        if not line or line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if field == "data":
            data.append(value)
        elif field == "event":
            kind = value or "message"
        elif field == "id" and "\0" not in value:
            ident = value
    if not data:
        return None
    return SSEEvent(data="\n".join(data), event=kind, id=ident)
