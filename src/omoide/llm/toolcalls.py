"""Accumulating streamed OpenAI tool-call fragments into whole calls."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from omoide.llm.base import ToolCall, ToolCallDelta


@dataclass
class _Partial:
    id: str | None = None
    name: str | None = None
    arguments: list[str] = field(default_factory=list)


class ToolCallAccumulator:
    """id and name arrive once, arguments in fragments, all keyed by `index`."""

    def __init__(self) -> None:
        self._calls: dict[int, _Partial] = {}

    def feed(self, deltas: list[dict[str, Any]]) -> list[ToolCallDelta]:
        """Take one chunk's `delta.tool_calls`; return them as progress events."""
        out: list[ToolCallDelta] = []
        for position, delta in enumerate(deltas):
            index = delta.get("index", position)
            if not isinstance(index, int):
                index = position
            partial = self._calls.setdefault(index, _Partial())
            if delta.get("id"):
                partial.id = delta["id"]
            function = delta.get("function") or {}
            name = function.get("name")
            if name and name != partial.name:
                # Most servers send the name once; a few repeat it whole on every
                # fragment, and a few stream it in pieces.
                partial.name = name if not partial.name else partial.name + name
            fragment = function.get("arguments") or ""
            if isinstance(fragment, dict):  # some servers send parsed JSON
                fragment = json.dumps(fragment)
            partial.arguments.append(fragment)
            out.append(ToolCallDelta(index=index, id=delta.get("id"), name=name, arguments=fragment))
        return out

    @property
    def pending(self) -> bool:
        return bool(self._calls)

    def finish(self) -> list[ToolCall]:
        """The whole calls, in index order; unparseable arguments become {}."""
        calls: list[ToolCall] = []
        for index in sorted(self._calls):
            partial = self._calls[index]
            raw = "".join(partial.arguments)
            try:
                parsed = json.loads(raw) if raw.strip() else {}
                arguments = parsed if isinstance(parsed, dict) else {}
            except json.JSONDecodeError:
                arguments = {}
            calls.append(ToolCall(id=partial.id or f"call_{index}", name=partial.name or "", arguments=arguments, raw_arguments=raw))
        self._calls = {}
        return calls
