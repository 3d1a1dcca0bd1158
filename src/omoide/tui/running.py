"""Running the TUI on an open session, in the caller's event loop, with
SIGTERM and SIGHUP ending it the way Ctrl+Q does."""

from __future__ import annotations

import asyncio
import signal

from omoide.chat.session import ChatSession
from omoide.tui.app import OmoideApp


async def run_chat_async(session: ChatSession) -> None:
    """Run the TUI on an open session, in the caller's event loop (the session's
    store connection and memory worker live there).

    SIGTERM and SIGHUP end the app the way Ctrl+Q does, so a streaming reply is
    kept (interrupted) and the terminal leaves the alternate screen with mouse
    tracking off; the process then exits with 128 + the signal number."""
    app = OmoideApp(session)
    loop = asyncio.get_running_loop()
    received: list[int] = []

    def on_signal(signum: int) -> None:
        received.append(signum)
        app.exit(return_code=128 + signum)

    handled = [s for s in (getattr(signal, "SIGTERM", None), getattr(signal, "SIGHUP", None)) if s is not None]
    for signum in handled:
        try:
            loop.add_signal_handler(signum, on_signal, int(signum))
        except (NotImplementedError, RuntimeError, ValueError):  # Windows, or not the main thread
            pass
    try:
        await app.run_async()
    finally:
        for signum in handled:
            try:
                loop.remove_signal_handler(signum)
            except (NotImplementedError, RuntimeError, ValueError):
                pass
    if received:
        raise SystemExit(128 + received[0])
