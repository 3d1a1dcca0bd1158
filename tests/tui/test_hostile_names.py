"""Names from cards and model servers in TUI titles and the status bar, through
Pilot: the memo book's title, the world screen's, the model in the status bar.
Nothing is read as markup and no control character reaches the screen."""

from __future__ import annotations

from pathlib import Path

from omoide.characters.model import Character
from omoide.config.settings import Settings
from omoide.chat.session import ChatSession
from omoide.store import Store
from omoide.tui.app import OmoideApp
from omoide.tui.screens.memos import MemoBookScreen
from tests.scripted import ScriptedBackend
from tests.tui.test_app import notices, type_and_send, wait_for

OSC = "\x1b]52;c;cHduZWQ=\x07\x1b]0;pwned\x07\x1b[2J\x9b31m"
NAME = f"Evil{OSC}[/][b]Name\\"


def assert_inert(shot: str) -> None:
    assert "\x1b]" not in shot and "\x9b" not in shot and "\x07" not in shot and "\x1b[2J" not in shot


async def test_the_memo_book_title_shows_a_hostile_name_inert(store: Store) -> None:
    evil = Character(id="evil", name=NAME, first_message="Hello.")
    session = await ChatSession.open(store, evil, Settings(user_name="Kai", memory_style="memos"), ScriptedBackend())
    app = OmoideApp(session)
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.press("ctrl+o")
        await wait_for(pilot, lambda: isinstance(app.screen, MemoBookScreen))
        await pilot.pause()
        title = str(app.screen.query_one("#memo-title").render())
        assert "␛]52;c;" in title and "[/][b]Name\\'s memo book" in title
        assert_inert(app.export_screenshot())


async def test_a_hostile_model_name_in_the_status_bar_is_inert(store: Store) -> None:
    backend = ScriptedBackend(model=f"gemma{OSC}[/][link=x]")
    session = await ChatSession.open(store, Character(id="mika", name="Mika", first_message="Hi."), Settings(), backend)
    app = OmoideApp(session)
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.pause()
        assert app.is_running
        shot = app.export_screenshot()
        assert_inert(shot)
        assert "[/][link=x]" in str(app.query_one("StatusBar").render())


async def test_a_broken_template_override_is_a_notice_in_the_tui(store: Store, omoide_home: Path) -> None:
    folder = omoide_home / "config" / "templates"
    folder.mkdir(parents=True)
    (folder / "summary.txt").write_text("Sum up {name:>2000000} and {user}.")
    summary = "Kai and Mika talked about the bakery for a long while; she told him about the old oven."
    summarizer = ScriptedBackend(default=lambda messages: [summary])
    settings = Settings(user_name="Kai", memory_style="summary", summary_threshold=3, recent_messages=2)
    session = await ChatSession.open(store, Character(id="mika", name="Mika", first_message="Hi."), settings,
                                     ScriptedBackend(default=lambda messages: ["*nods*"]), summarizer=summarizer)
    app = OmoideApp(session)
    async with app.run_test(size=(140, 40)) as pilot:
        for text in ("one", "two"):
            await type_and_send(pilot, text)
            await wait_for(pilot, lambda: not app.turn_running)
        await wait_for(pilot, lambda: any("Your template summary is not used" in n for n in notices(app)))
        assert "pads or extends it past 100 characters" in " ".join(notices(app))
        sent = [m["content"] for call in summarizer.calls for m in call["messages"]]
        assert any("Summarize the following conversation" in str(c) for c in sent)
        assert all(len(str(c)) < 100_000 for c in sent)



async def test_the_message_box_placeholder_shows_a_name_with_brackets_as_typed(store: Store) -> None:
    """The box's placeholder names the character: '[b]' in a card's name is text, not bold."""
    odd = Character(id="odd", name="Mi[b]ka[/b]", first_message="Hello.")
    app = OmoideApp(await ChatSession.open(store, odd, Settings(user_name="Kai"), ScriptedBackend()))
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.pause()
        from omoide.tui.widgets.composer import Composer

        assert app.query_one(Composer).render_line(0).text.startswith("Message Mi[b]ka[/b]…")
