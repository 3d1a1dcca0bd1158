"""Which form the diary tool takes with a backend: native tool calls, or the
inline `<save_memory>` tags.

`tools = "native"` or `"inline"` in the config decides. With `"auto"`, the
embedded model uses the inline form (it has no tool calling), Anthropic the
native one, and an OpenAI-compatible server is asked once: a short request
offers `save_memory` exactly as a chat turn does and asks the model to call it.
Servers that accept `tools` but never hand them to the model (llama-cpp-python's
server does that unless a request names a `tool_choice`) answer in plain text,
and get the inline form. The answer is kept per server and model in the data
directory, so it is asked once, not every turn.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

from omoide import locations
from omoide.config.settings import Settings
from omoide.errors import BackendError
from omoide.llm.base import Backend, ChatMessage, TextDelta, ToolCall
from omoide.llm.slots import MEMORY_CACHE_KEY
from omoide.memory.diary import NATIVE_INSTRUCTIONS, SAVE_MEMORY
from omoide.safe_text import json_text

log = logging.getLogger(__name__)

PROBE: list[ChatMessage] = [
    {"role": "system", "content": NATIVE_INSTRUCTIONS},
    {"role": "user", "content": "Something significant just happened: I told you my cat is called Mochi. Save it in your diary now."},
]
PROBE_TOKENS = 64
PROBE_TEXT_LIMIT = 1000
"""Characters of text after which the model has plainly answered in text."""


@dataclass(frozen=True, slots=True)
class ToolForm:
    form: Literal["native", "inline"]
    reason: str


def _key(settings: Settings, backend: Backend) -> str:
    return f"{settings.backend.base_url}|{backend.model}"


def _cached(key: str) -> ToolForm | None:
    try:
        data = json.loads(locations.tool_forms_file().read_text(encoding="utf-8"))
        found = data[key]
        form = found["form"]
        if form in ("native", "inline"):
            return ToolForm(form, str(found["reason"]))
    except (OSError, ValueError, KeyError, TypeError):
        pass
    return None


def _remember(key: str, found: ToolForm) -> None:
    path = locations.tool_forms_file()
    try:
        data = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
        if not isinstance(data, dict):
            data = {}
        data[key] = {"form": found.form, "reason": found.reason}
        locations.write_private(path, json_text(data, indent=1))
    except OSError as exc:  # not fatal: the server is simply asked again next time
        log.warning("could not record the tool form in %s: %s", path, exc)


async def probe(backend: Backend, where: str) -> ToolForm:
    """Offer save_memory once and see whether the model calls it."""
    called = False
    text = 0
    events = backend.stream(list(PROBE), tools=[SAVE_MEMORY], max_tokens=PROBE_TOKENS, cache_key=MEMORY_CACHE_KEY)  # off the chat's slot
    try:
        async for event in events:
            if isinstance(event, ToolCall) and event.name == SAVE_MEMORY.name:
                called = True
            elif isinstance(event, TextDelta):
                text += len(event.text)
                if text > PROBE_TEXT_LIMIT:
                    break  # plainly answering in text (a server may ignore max_tokens)
    finally:
        close = getattr(events, "aclose", None)  # close the HTTP stream we stopped reading
        if close is not None:
            await close()
    day = f"{datetime.now(UTC):%Y-%m-%d}"
    if not backend.supports_tools:
        return ToolForm("inline", f"the server at {where} refused tool calls (checked {day})")
    if called:
        return ToolForm("native", f"the model at {where} called save_memory when asked to (checked {day})")
    return ToolForm("inline", f"the model at {where} answered in text instead of calling save_memory when asked to (checked {day})")


async def resolve(settings: Settings, backend: Backend, *, ask: bool = True) -> ToolForm:
    """The form to use with `backend`, and why. `ask=False` never sends a request
    (a form not yet found out is reported as such)."""
    if settings.backend.tools != "auto":
        return ToolForm(settings.backend.tools, f'set in the config (tools = "{settings.backend.tools}")')
    if backend.name == "local":
        return ToolForm("inline", "the embedded model has no tool calling")
    if not backend.supports_tools:
        return ToolForm("inline", f"{backend.name} backend: tools are not offered")
    if backend.name != "openai":
        return ToolForm("native", f"the {backend.name} backend calls tools")
    key = _key(settings, backend)
    cached = _cached(key)
    if cached is not None:
        return cached
    if not ask:
        return ToolForm("native", "not yet checked: the first reply asks the model once")
    where = settings.backend.base_url or "the server"
    try:
        found = await probe(backend, where)
    except BackendError as exc:
        log.info("tool probe failed: %s", exc.message)
        return ToolForm("native", f"not checked: {exc.message}")
    log.info("diary form for %s: %s (%s)", key, found.form, found.reason)
    _remember(key, found)
    return found
