"""Two writers on one chat: the TUI (through Pilot) and `omoide say` in a
subprocess, on one data directory. Neither side's exchange is lost off the
path without a word: the TUI refreshes, continues after the other's exchange
with a notice, or keeps its reply on a named branch and says so."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest

from omoide.characters.library import find_character
from omoide.config.settings import Settings
from omoide.llm.base import ChatMessage, TokenCount
from omoide.chat.session import ChatSession
from omoide.store import Store
from omoide.tui import app as app_module
from omoide.tui.app import OmoideApp
from tests.faultserver import Reply, stream_reply
from tests.scripted import ScriptedBackend
from tests.tui.test_app import notices, texts, type_and_send, wait_for


class GatedBackend(ScriptedBackend):
    """Holds a turn after its message is stored and before its reply row is,
    while `gate` is clear (prompt assembly counts tokens in between)."""

    def __init__(self) -> None:
        super().__init__(default=lambda m: ["From the TUI."])
        self.gate = asyncio.Event()
        self.gate.set()
        self.waiting = False

    async def count_tokens(self, messages: list[ChatMessage]) -> TokenCount:
        if not self.gate.is_set():
            self.waiting = True
            await self.gate.wait()
        return await super().count_tokens(messages)


async def say_in_subprocess(fault_server, chat_id: int) -> str:  # type: ignore[no-untyped-def]
    def reply(request):  # type: ignore[no-untyped-def]
        return stream_reply("From the script.") if request.path.endswith("/chat/completions") else Reply(status=404, body=b"{}")

    fault_server.queue(*[reply] * 6)
    env = {**os.environ, "OMOIDE_BASE_URL": fault_server.base_url, "OMOIDE_MODEL": "m"}
    proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "omoide.cli.app", "say", "wren", "Script here.", "--chat", str(chat_id),
                                                env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 120)
    assert proc.returncode == 0, err.decode()
    return err.decode()


@pytest.fixture
async def tui(omoide_home: Path):  # type: ignore[no-untyped-def]
    store = await Store.open(omoide_home / "data" / "omoide.db")
    backend = GatedBackend()
    settings = Settings(user_name="Kai")
    session = await ChatSession.open(store, find_character("wren"), settings, backend)
    yield OmoideApp(session), backend
    await store.close()


async def test_the_tui_shows_what_say_wrote_in_the_same_chat(tui, fault_server) -> None:  # type: ignore[no-untyped-def]
    app, _ = tui
    async with app.run_test(size=(110, 36)) as pilot:
        await say_in_subprocess(fault_server, app.session.chat.id)
        await wait_for(pilot, lambda: [t for _, t in texts(app)][-2:] == ["Script here.", "From the script."], timeout=30)
        assert any("changed in another window" in n for n in notices(app))
        await type_and_send(pilot, "And the TUI again.")
        await wait_for(pilot, lambda: not app.turn_running and texts(app)[-1][1] == "From the TUI.")
        path = await app.session.store.messages.path(app.session.chat.head_id)
        assert [m.content for m in path][1:] == ["Script here.", "From the script.", "And the TUI again.", "From the TUI."]


async def test_sending_after_another_window_wrote_continues_from_its_head_with_a_notice(
    tui, fault_server, monkeypatch: pytest.MonkeyPatch  # type: ignore[no-untyped-def]
) -> None:
    monkeypatch.setattr(app_module, "OTHER_WRITERS_INTERVAL", 3600)  # the TUI has not looked yet
    app, _ = tui
    async with app.run_test(size=(110, 36)) as pilot:
        await say_in_subprocess(fault_server, app.session.chat.id)
        await type_and_send(pilot, "Did I miss something?")
        await wait_for(pilot, lambda: not app.turn_running and texts(app)[-1][1] == "From the TUI.")
        assert any("your message follows what was written there" in n for n in notices(app))
        assert [t for _, t in texts(app)][1:] == ["Script here.", "From the script.", "Did I miss something?", "From the TUI."]


async def test_a_reply_overtaken_by_another_window_is_kept_on_a_named_branch(tui, fault_server) -> None:  # type: ignore[no-untyped-def]
    app, backend = tui
    async with app.run_test(size=(110, 36)) as pilot:
        backend.gate.clear()
        await type_and_send(pilot, "From the TUI first.")
        await wait_for(pilot, lambda: backend.waiting)  # stored, reply not started
        await say_in_subprocess(fault_server, app.session.chat.id)
        backend.gate.set()
        await wait_for(pilot, lambda: not app.turn_running and any("kept on the branch" in n for n in notices(app)))
        await wait_for(pilot, lambda: [t for _, t in texts(app)][-1:] == ["From the script."])
        path = [m.content for m in await app.session.store.messages.path(app.session.chat.head_id)]
        assert path[1:] == ["From the TUI first.", "Script here.", "From the script."]
        fork = next(b for b in await app.session.tree.branches() if b.name.startswith("fork-"))
        kept = await app.session.store.messages.path(fork.message_id)
        assert [m.content for m in kept][1:] == ["From the TUI first.", "From the TUI."]
