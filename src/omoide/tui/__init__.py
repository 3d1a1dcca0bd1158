"""The terminal UI (Textual): the only package that imports Textual.

`run_chat_async(session)` runs `OmoideApp` on an open `ChatSession` in the
caller's event loop (`omoide chat` calls it; the session's store connection and
memory worker live in that loop, so there is no separate sync entry that would
start another). The app sets the session's memory-event callback to
`OmoideApp.handle_memory_event`; the sessions it opens itself (the chat list,
/new) come from `session.open_another`, which keeps it.

The TUI never holds a `Store`: it reads the chat through the session and
`session.navigator` (paging, search, goto, branches, the chat list).

Layout: `app.py` (layout, turns, the worker-failure handler), `host.py` (what a
command handler may use of the app, and the command table), `commands.py` (the
slash-command handlers), `messages.py` (what workers post back), `widgets/`
(transcript, message, diary pane, status bar), `screens/` (chat list, prompt
inspector, branch picker, search, text and input modals).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from omoide.chat.session import ChatSession


async def run_chat_async(session: ChatSession) -> None:
    from omoide.tui.running import run_chat_async as run

    await run(session)
