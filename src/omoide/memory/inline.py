"""The inline form of the tools, for models without native tool calls:
`<save_memory importance="4" emotion="joy" about_user="true">…</save_memory>`
and `<recall>words</recall>`, taken out of a streamed reply.

Text that might be the start of a tag is held back until it is clear, so the
user never sees a tag flicker on screen. An opening tag longer than
`MAX_OPEN_TAG` characters is not a tag (bounded: model output is untrusted).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

MAX_OPEN_TAG = 160
_ATTRIBUTE = re.compile(r"""([A-Za-z_]+)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))""")


@dataclass(frozen=True, slots=True)
class InlineTag:
    name: str
    text: str
    attrs: dict[str, str] = field(default_factory=dict)


def parse_attributes(text: str) -> dict[str, str]:
    return {m.group(1).lower(): next(g for g in m.groups()[1:] if g is not None) for m in _ATTRIBUTE.finditer(text)}


class InlineTagFilter:
    def __init__(self, names: tuple[str, ...] = ("save_memory",), *, stop: tuple[str, ...] = ()) -> None:
        self.names = names
        self.stop = stop
        """Tags after which the stream is over: what follows is dropped (the model
        asked for a recall and must not invent the answer)."""
        self._pending = ""
        self._inside: str | None = None
        self._attrs: dict[str, str] = {}
        self._body: list[str] = []

    def _open_at(self, data: str) -> tuple[int, str, int] | None:
        """The first complete opening tag: (start, name, end of tag), or None."""
        best: tuple[int, str, int] | None = None
        for name in self.names:
            start = 0
            while (start := data.find(f"<{name}", start)) != -1:
                after = start + len(name) + 1
                close = data.find(">", after, after + MAX_OPEN_TAG)
                if after < len(data) and (data[after] == ">" or data[after].isspace()) and close != -1 and "<" not in data[after:close]:
                    if best is None or start < best[0]:
                        best = (start, name, close + 1)
                    break
                start += 1
        return best

    def _hold(self, data: str) -> int:
        """Characters at the end of `data` that may still become an opening tag."""
        start = data.rfind("<", max(0, len(data) - MAX_OPEN_TAG - 16))
        if start == -1 or ">" in data[start:]:
            return 0
        partial = data[start + 1 :]
        for name in self.names:
            if name.startswith(partial) or (partial.startswith(name) and (len(partial) == len(name) or partial[len(name)].isspace())):
                return len(data) - start
        return 0

    def feed(self, text: str) -> tuple[str, list[InlineTag]]:
        visible: list[str] = []
        tags: list[InlineTag] = []
        data = self._pending + text
        self._pending = ""
        while data:
            if self._inside is not None:
                closing = f"</{self._inside}>"
                end = data.find(closing)
                if end == -1:
                    keep = _partial_suffix(data, closing)
                    self._body.append(data[: len(data) - keep])
                    self._pending = data[len(data) - keep :]
                    break
                self._body.append(data[:end])
                tag = InlineTag(self._inside, "".join(self._body).strip(), self._attrs)
                tags.append(tag)
                self._inside, self._attrs, self._body = None, {}, []
                data = data[end + len(closing) :]
                if tag.name in self.stop and tag.text:
                    break
            else:
                found = self._open_at(data)
                if found is None:
                    keep = self._hold(data)
                    visible.append(data[: len(data) - keep])
                    self._pending = data[len(data) - keep :]
                    break
                start, name, end = found
                visible.append(data[:start])
                self._inside = name
                self._attrs = parse_attributes(data[start + len(name) + 1 : end - 1])
                data = data[end:]
        return "".join(visible), [t for t in tags if t.text]

    def flush(self) -> tuple[str, list[InlineTag]]:
        """End of stream: an unclosed tag still counts."""
        pending, self._pending = self._pending, ""
        if self._inside is not None:
            tag = InlineTag(self._inside, ("".join(self._body) + pending).strip(), self._attrs)
            self._inside, self._attrs, self._body = None, {}, []
            return "", [tag] if tag.text else []
        return pending, []

    @property
    def inside(self) -> str | None:
        """The tag being read, if the stream stopped inside one."""
        return self._inside


def _partial_suffix(data: str, tag: str) -> int:
    """Length of the longest suffix of `data` that is a proper prefix of `tag`."""
    for size in range(min(len(tag) - 1, len(data)), 0, -1):
        if tag.startswith(data[-size:]):
            return size
    return 0
