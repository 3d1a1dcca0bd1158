"""A group scene in the real TUI (Pilot): speaker names, /invite, /leave, /next, /continue and Esc."""

from __future__ import annotations

import asyncio
from pathlib import Path

from omoide.characters.library import find_character
from omoide.config.settings import Settings
from omoide.domain.chat import MessageStatus, Role
from omoide.chat.session import ChatSession
from omoide.store import Store
from omoide.tui.app import OmoideApp
from omoide.tui.widgets.composer import Composer
from tests.scene.test_scene_session import add_mika, echo_speaker
from tests.scripted import ScriptedBackend
from tests.tui.test_app import SIZE, notices, texts, type_and_send, wait_for


async def scene_app(store: Store, backend: ScriptedBackend) -> OmoideApp:
    settings = Settings(user_name="Kai", scene_seed=3, gossip_rate=0.0)
    session = await ChatSession.open(store, find_character("suzune"), settings, backend, others=[find_character("wren")])
    return OmoideApp(session)


async def test_a_scene_shows_speaker_names_and_invite_leave_next_work(store: Store, omoide_home: Path) -> None:
    add_mika(omoide_home)
    app = await scene_app(store, ScriptedBackend(default=echo_speaker))
    async with app.run_test(size=SIZE) as pilot:
        assert "Suzune, Wren" in str(app.query_one("#title").render())
        assert str(app.query_one("#input", Composer).placeholder).startswith("Message Suzune, Wren…")
        await type_and_send(pilot, "Wren, good evening.")
        await wait_for(pilot, lambda: len(texts(app)) == 3 and app.reply_view is None, timeout=60)
        assert texts(app)[1:] == [("Kai", "Wren, good evening."), ("Wren", "(Wren speaking)")]

        await type_and_send(pilot, "/invite Mika")
        await wait_for(pilot, lambda: ("Stage", "Mika joins the scene.") in texts(app), timeout=60)
        assert [c.id for c in app.session.scene.present] == ["suzune", "wren", "mika"]
        assert "Mika" in str(app.query_one("#title").render())

        await type_and_send(pilot, "/next Suzune")
        await wait_for(pilot, lambda: texts(app)[-1] == ("Suzune", "(Suzune speaking)") and app.reply_view is None, timeout=60)

        await type_and_send(pilot, "/leave Wren")
        await wait_for(pilot, lambda: ("Stage", "Wren leaves the scene.") in texts(app), timeout=60)
        assert [c.id for c in app.session.scene.present] == ["suzune", "mika"]
        assert str(app.query_one("#input", Composer).placeholder).startswith("Message Suzune, Mika…")

        await type_and_send(pilot, "/next Wren")
        await wait_for(pilot, lambda: any("Wren is not in this chat" in n for n in notices(app)), timeout=60)

        await type_and_send(pilot, "/world Wren")  # what one character of the scene carries
        await wait_for(pilot, lambda: getattr(app.screen, "owner", None) == "wren", timeout=60)
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is app.screen_stack[0], timeout=60)

        await pilot.press("ctrl+l")  # the chat list names everyone who was in the scene
        await wait_for(pilot, lambda: app.screen.query("DataTable") and app.screen.query_one("DataTable").row_count == 1, timeout=60)
        row = app.screen.query_one("DataTable").get_row_at(0)
        assert "suzune, wren, mika" in [str(cell) for cell in row]


async def test_continue_runs_character_turns_and_escape_stops_them(store: Store) -> None:
    hold = asyncio.Event()
    backend = ScriptedBackend(default=echo_speaker)
    app = await scene_app(store, backend)
    async with app.run_test(size=SIZE) as pilot:
        await type_and_send(pilot, "/continue 2")
        await wait_for(pilot, lambda: len(texts(app)) == 3 and not app.turn_running, timeout=60)
        assert {name for name, _ in texts(app)[1:]} == {"Suzune", "Wren"}  # two turns, nobody answers itself

        backend.add(["(first)"], ["(held) and a sentence long enough to be shown at once. ", hold])
        await type_and_send(pilot, "/continue 5")
        await wait_for(pilot, lambda: "(held)" in texts(app)[-1][1], timeout=60)
        await pilot.press("escape")
        await wait_for(pilot, lambda: not app.turn_running, timeout=60)
        path = await app.session.transcript()
        assert len([m for m in path if m.role is Role.ASSISTANT]) == 1 + 2 + 2  # greeting, 2, then 2 of the 5
        assert path[-1].status is MessageStatus.INTERRUPTED and path[-1].content.startswith("(held)")


async def test_the_recall_notice_names_the_character_who_is_speaking(store: Store) -> None:
    """Wren searches her memory in a scene with Suzune: the notice says Wren, not the chat's first character."""
    settings = Settings(user_name="Kai", scene_seed=3, gossip_rate=0.0, recall_tool=True)
    backend = ScriptedBackend([["Hm. <recall>lighthouse keys</recall>"], ["I remember now."]])
    session = await ChatSession.open(store, find_character("suzune"), settings, backend, others=[find_character("wren")])
    app = OmoideApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await type_and_send(pilot, "Wren, where did you leave the lighthouse keys?")
        await wait_for(pilot, lambda: any("tries to remember" in n for n in notices(app)), timeout=60)
        await wait_for(pilot, lambda: not app.turn_running, timeout=60)
        assert texts(app)[-1][0] == "Wren"
        recalled = [n for n in notices(app) if "tries to remember" in n]
        assert recalled == ["Wren tries to remember 'lighthouse keys': nothing came back."]


async def test_the_chat_title_follows_invite_and_leave_and_two_chats_are_told_apart(store: Store) -> None:
    """Issue 42: two chats with Suzune were both "Chat with Suzune", and a scene's
    title stayed as it was after /invite (the header named the new cast beside it)."""
    settings = Settings(user_name="Kai", scene_seed=3, gossip_rate=0.0)
    app = OmoideApp(await ChatSession.open(store, find_character("suzune"), settings, ScriptedBackend(default=echo_speaker)))
    title = lambda: str(app.query_one("#title").render())  # noqa: E731
    async with app.run_test(size=SIZE) as pilot:
        first = app.session.chat.title
        assert first.startswith("Chat with Suzune · ") and first in title()
        await type_and_send(pilot, "/invite Wren")
        await wait_for(pilot, lambda: ("Stage", "Wren joins the scene.") in texts(app), timeout=60)
        assert app.session.chat.title == first.replace("Chat with Suzune", "Scene with Suzune, Wren")
        assert app.session.chat.title in title()
        await type_and_send(pilot, "/leave Wren")
        await wait_for(pilot, lambda: ("Stage", "Wren leaves the scene.") in texts(app), timeout=60)
        assert app.session.chat.title == first and first in title()
        await type_and_send(pilot, "/rename Tea with Suzune")
        await wait_for(pilot, lambda: app.session.chat.title == "Tea with Suzune")
        await type_and_send(pilot, "/invite Wren")  # a title you gave stays yours
        await wait_for(pilot, lambda: texts(app).count(("Stage", "Wren joins the scene.")) == 2, timeout=60)
        assert app.session.chat.title == "Tea with Suzune"
        for _ in range(2):  # two more, begun in the same minute as likely as not
            before = app.session.chat.id
            await type_and_send(pilot, "/new")
            await wait_for(pilot, lambda: app.session.chat.id != before)
        second = app.session.chat.title
    chats = await store.chats.list("suzune")
    assert len(chats) == 3 and len({c.title for c in chats}) == 3
    assert second.startswith("Chat with Suzune · ")
