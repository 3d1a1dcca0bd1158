"""Server-sent events parsed from raw bytes.

Bytes are buffered and split on blank lines before anything is decoded, so a
multi-byte UTF-8 character split across network chunks is never corrupted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_EVENT_END = re.compile(rb"\r\n\r\n|\n\n|\r\r|\r\n\n|\n\r\n")
_LINE = re.compile(r"\r\n|\n|\r")


@dataclass(frozen=True, slots=True)
class SSEEvent:
    data: str
    event: str = "message"
    id: str | None = None


class SSEParser:
    def __init__(self) -> None:
        self._buffer = b""

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        self._buffer += chunk
        events: list[SSEEvent] = []
        while True:
            match = _EVENT_END.search(self._buffer)
            if match is None:
                break
            raw, self._buffer = self._buffer[: match.start()], self._buffer[match.end() :]
            event = _parse(raw)
            if event is not None:
                events.append(event)
        return events

    def close(self) -> list[SSEEvent]:
        """End of stream: a final event without its blank line still counts."""
        raw, self._buffer = self._buffer, b""
        event = _parse(raw) if raw.strip() else None
        return [event] if event is not None else []


def _parse(raw: bytes) -> SSEEvent | None:
    text = raw.decode("utf-8", errors="replace")
    data: list[str] = []
    kind, ident = "message", None
    for line in _LINE.split(text):
        if not line or line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if field == "data":
            data.append(value)
        elif field == "event":
            kind = value or "message"
        elif field == "id":
            ident = value
    if not data:
        return None
    return SSEEvent(data="\n".join(data), event=kind, id=ident)
