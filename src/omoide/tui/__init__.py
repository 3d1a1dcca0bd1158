"""The terminal UI (Textual): the only package that imports Textual.

`run_chat_async(session, store, settings)` runs `OmoideApp` on an open
`ChatSession` in the caller's event loop (`omoide chat` calls it; the session's
store connection and memory worker live in that loop, so there is no separate
sync entry that would start another). The app sets the session's memory-event
callback to `OmoideApp.handle_memory_event`, and passes it as `on_memory_event`
to every session it opens itself (the chat list, /new).

Layout: `app.py` (layout, turns, the worker-failure handler), `commands.py`
(slash-command dispatch table), `messages.py` (what workers post back),
`widgets/` (transcript, message, diary pane, status bar), `screens/` (chat
list, prompt inspector, branch picker, text and input modals).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from omoide.config import Settings
    from omoide.session import ChatSession
    from omoide.store import Store


async def run_chat_async(session: ChatSession, store: Store, settings: Settings) -> None:
    from omoide.tui.app import run_chat_async as run

    await run(session, store, settings)
