"""The terminal UI (Textual). The only package that imports Textual."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from omoide.config import Settings
    from omoide.session import ChatSession
    from omoide.store import Store


async def run_chat_async(session: ChatSession, store: Store, settings: Settings) -> None:
    from omoide.tui.app import run_chat_async as run

    await run(session, store, settings)
