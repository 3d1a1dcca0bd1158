"""Untrusted text in every TUI surface, through Pilot: nothing is parsed as
markup, and no control character reaches the screen."""

from __future__ import annotations

import pytest

from omoide.characters.model import Character
from omoide.config.settings import Settings
from omoide.domain.chat import DiaryAuthor, Role
from omoide.chat.session import ChatSession
from omoide.store import Store
from omoide.tui.app import OmoideApp
from tests.scripted import ScriptedBackend
from tests.tui.test_app import notices, type_and_send, wait_for

ESCAPES = "\x1b]52;c;cHduZWQ=\x07\x1b]0;pwned\x07\x1b[2J\x9b31m"
MARKUP = "[/OOC] [/] [blink]x[/blink]"
HOSTILE = f"{ESCAPES} {MARKUP} matcha"
EVIL = Character(id="evil", name=f"Evil {ESCAPES}[/]", first_message=f"Hello {HOSTILE}")


async def hostile_app(store: Store, backend: ScriptedBackend | None = None) -> OmoideApp:
    settings = Settings(user_name="Kai")
    session = await ChatSession.open(store, EVIL, settings, backend or ScriptedBackend([[f"Reply {HOSTILE}"]]))
    chat = session.chat
    await store.chats.rename(chat.id, f"Title {HOSTILE}")
    user = await store.messages.add(chat.id, chat.head_id, Role.USER, f"Me {HOSTILE}")
    reply = await store.messages.add(chat.id, user.id, Role.ASSISTANT, f"Her {HOSTILE}")
    await store.memory.add_diary_entry(chat.id, reply.id, f"Diary {HOSTILE}", DiaryAuthor.CHARACTER)
    await store.memory.add_summary(chat.id, reply.id, content=f"Summary {HOSTILE}", covers_to_id=user.id, diary_to_id=None)
    await store.branches.save(chat.id, "here", reply.id)
    return OmoideApp(session)


def screen_text(app: OmoideApp) -> str:
    """What the terminal would be sent for the current screen, as text."""
    return app.export_screenshot()


def assert_inert_screen(app: OmoideApp) -> str:
    shot = screen_text(app)
    assert "\x1b" not in shot and "\x9b" not in shot and "\x07" not in shot
    return shot


async def test_transcript_diary_title_and_status_show_hostile_text_inert(store: Store) -> None:
    app = await hostile_app(store)
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.press("ctrl+d")
        await pilot.pause()
        await type_and_send(pilot, "hi")
        await wait_for(pilot, lambda: not app.turn_running and app.reply_view is None and len(app.transcript.views()) == 5)
        await pilot.pause()
        shot = assert_inert_screen(app)
        assert "␛]52;c;" in shot.replace("&#160;", " ")


@pytest.mark.parametrize("command", ["/search matcha", "/summary", "/prompt", "/branch list", "/chats", "/rename [/OOC] \x1b[2J"])
async def test_every_screen_shows_hostile_text_inert_and_never_crashes(store: Store, command: str) -> None:
    app = await hostile_app(store)
    async with app.run_test(size=(140, 40)) as pilot:
        await type_and_send(pilot, "hi")
        await wait_for(pilot, lambda: not app.turn_running and app.reply_view is None)
        await type_and_send(pilot, command)
        await pilot.pause()
        await pilot.pause()
        assert app.is_running
        assert_inert_screen(app)
        if command.startswith("/search"):
            assert "[/OOC]" in app.screen.query_one("DataTable").get_row_at(0)[4].plain


async def test_a_hostile_notice_is_inert(store: Store) -> None:
    backend = ScriptedBackend([])
    from omoide.errors import ServerFailed

    backend.add(ServerFailed(f"The server said: {HOSTILE}", "[bold]hint[/]"))
    app = await hostile_app(store, backend)
    async with app.run_test(size=(140, 40)) as pilot:
        await type_and_send(pilot, "hi")
        await wait_for(pilot, lambda: any("The server said" in n for n in notices(app)))
        await pilot.pause()
        assert all("\x1b" not in n for n in notices(app))
        assert any("[bold]hint[/]" in n for n in notices(app))
        assert_inert_screen(app)


@pytest.mark.parametrize("target", ["#99999999999999999999", "0001-01-01", "9999-12-31 23:59", "#²"])
async def test_goto_out_of_range_gives_a_clear_notice_not_python_text(store: Store, target: str) -> None:
    app = await hostile_app(store)
    async with app.run_test(size=(140, 40)) as pilot:
        await type_and_send(pilot, f"/goto {target}")
        await wait_for(pilot, lambda: bool(notices(app)))
        shown = " ".join(notices(app))
        assert "Error" not in shown and "Something went wrong" not in shown and "int too large" not in shown, shown
        assert app.is_running
