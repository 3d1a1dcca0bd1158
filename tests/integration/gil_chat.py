"""`omoide chat` on a backend that, like the embedded model, works in a thread
that holds the interpreter most of the time while the reply streams (slowly).
Run as a script in a terminal by test_toast_terminal.py."""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parents[2]))

from omoide.llm.base import Done, TextDelta  # noqa: E402
from tests.scripted import ScriptedBackend  # noqa: E402

WORDS = 120
BUSY = 0.2
"""Seconds of pure-Python work (holding the GIL) before each word."""


class BusyBackend(ScriptedBackend):
    name = "local"
    embedded = True

    async def stream(self, messages: Any, *, tools: Any = None, tool_choice: Any = None, max_tokens: Any = None,
                     cache_key: str | None = None) -> AsyncIterator[Any]:
        loop = asyncio.get_running_loop()
        words: asyncio.Queue[str | None] = asyncio.Queue()

        def work() -> None:
            for i in range(WORDS):
                end, spin = time.monotonic() + BUSY, 0
                while time.monotonic() < end:
                    spin += 1
                loop.call_soon_threadsafe(words.put_nowait, f"word{i} ")
            loop.call_soon_threadsafe(words.put_nowait, None)

        threading.Thread(target=work, daemon=True).start()
        while (word := await words.get()) is not None:
            yield TextDelta(word)
        yield Done("stop")


async def main() -> None:
    from omoide.characters.library import find_character
    from omoide.config.settings import load_settings
    from omoide.chat.session import ChatSession
    from omoide.store import Store
    from omoide.tui import run_chat_async

    store = await Store.open()
    try:
        session = await ChatSession.open(store, find_character("suzune"), load_settings(), BusyBackend(model="SmolLM2-135M"))
        await run_chat_async(session)
    finally:
        await store.close()


if __name__ == "__main__":
    asyncio.run(main())
