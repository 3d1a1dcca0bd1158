"""The real TUI, driven through Textual's Pilot, on a real SQLite file."""

from __future__ import annotations

import asyncio
from pathlib import Path

from omoide.characters.model import Character
from omoide.config.settings import Settings
from omoide.domain.chat import MessageStatus, Role
from omoide.errors import BackendUnreachable
from omoide.chat.session import ChatSession
from omoide.store import Store
from omoide.tui.app import OmoideApp
from omoide.tui.widgets.diary import DiaryPane
from tests.scripted import ScriptedBackend

MIKA = Character(id="mika", name="Mika", first_message="*waves* Hello, {{user}}!")
SIZE = (110, 36)


async def make_app(store: Store, backend: ScriptedBackend) -> OmoideApp:
    settings = Settings(user_name="Kai")
    session = await ChatSession.open(store, MIKA, settings, backend)
    return OmoideApp(session)


async def long_chat_app(store: Store, lines: int, text=lambda i: f"line {i}", backend: ScriptedBackend | None = None) -> OmoideApp:  # type: ignore[no-untyped-def]
    """An app on a chat of the greeting plus `lines` alternating messages."""
    settings = Settings(user_name="Kai")
    session = await ChatSession.open(store, MIKA, settings, backend or ScriptedBackend())
    head = session.chat.head_id
    for i in range(lines):
        head = (await store.messages.add(session.chat.id, head, Role.USER if i % 2 == 0 else Role.ASSISTANT, text(i))).id
    return OmoideApp(session)


async def type_and_send(pilot, text: str) -> None:  # type: ignore[no-untyped-def]
    pilot.app.query_one("#input").value = text
    await pilot.press("enter")


async def wait_for(pilot, condition, timeout: float = 15.0) -> None:  # type: ignore[no-untyped-def]
    for _ in range(int(timeout / 0.05)):
        if condition():
            return
        await pilot.pause(0.05)
    raise AssertionError("condition not met in time")


def texts(app: OmoideApp) -> list[tuple[str, str]]:
    return [(v.speaker, v.text) for v in app.transcript.views()]


def notices(app: OmoideApp) -> list[str]:
    return [str(n.message) for n in app._notifications]


async def test_a_message_and_its_streamed_reply_appear(store: Store) -> None:
    app = await make_app(store, ScriptedBackend([["*smiles* ", "Fresh ", "bread ", "today."]], delay=0.02))
    async with app.run_test(size=SIZE) as pilot:
        assert texts(app) == [("Mika", "*waves* Hello, Kai!")]
        await type_and_send(pilot, "Good morning!")
        await wait_for(pilot, lambda: len(texts(app)) == 3 and app.reply_view is None)
        assert texts(app)[1:] == [("Kai", "Good morning!"), ("Mika", "*smiles* Fresh bread today.")]
        assert "prompt" in app.query_one("StatusBar").render()
        assert app.query_one("#input").value == ""


async def test_escape_stops_the_reply_and_keeps_it_marked_interrupted(store: Store) -> None:
    hold = asyncio.Event()
    app = await make_app(store, ScriptedBackend([["Once upon ", "a time, ", hold, "never shown"]]))
    async with app.run_test(size=SIZE) as pilot:
        await type_and_send(pilot, "Tell me a story")
        await wait_for(pilot, lambda: app.reply_view is not None and app.reply_view.text == "Once upon a time, ")
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.reply_view is None)
        view = app.transcript.views()[-1]
        assert "(interrupted)" in str(view.query_one(".meta").render())
        assert view.text == "Once upon a time, "
    reply = (await store.messages.path((await store.chats.latest("mika")).head_id))[-1]
    assert reply.status is MessageStatus.INTERRUPTED and reply.content == "Once upon a time,"


async def test_a_failing_backend_shows_a_notice_and_keeps_the_message(store: Store) -> None:
    error = BackendUnreachable("Cannot reach the server at http://127.0.0.1:9/v1 (ConnectError).", "Is it running? Check base_url.")
    app = await make_app(store, ScriptedBackend([error, ["I'm back."]]))
    async with app.run_test(size=SIZE) as pilot:
        await type_and_send(pilot, "Hello?")
        await wait_for(pilot, lambda: any("Cannot reach the server" in n for n in notices(app)))
        assert texts(app)[-1] == ("Kai", "Hello?")
        assert any("Check base_url" in n for n in notices(app))
        await type_and_send(pilot, "Still there?")
        await wait_for(pilot, lambda: texts(app)[-1] == ("Mika", "I'm back."))


async def test_help_lists_the_commands_and_a_typo_gets_a_suggestion(store: Store) -> None:
    app = await make_app(store, ScriptedBackend())
    async with app.run_test(size=SIZE) as pilot:
        await type_and_send(pilot, "/hepl")
        await pilot.pause()
        assert any("Unknown command /hepl" in n and "Did you mean /help?" in n for n in notices(app))
        app.query_one("#input").value = ""
        await type_and_send(pilot, "/help")
        await pilot.pause()
        from omoide.tui.screens.help import HelpScreen

        assert isinstance(app.screen, HelpScreen)
        text = "\n".join(strip.text for strip in app.screen._compositor.render_strips())
        assert "/branch save|restore|list|delete NAME" in text
        assert "/remember [!] [--importance 1-5] TEXT" in text and "/profile [add TEXT]" in text


async def test_the_diary_pane_toggles_and_shows_remembered_lines(store: Store) -> None:
    app = await make_app(store, ScriptedBackend([["Noted.<save_memory>He is allergic to walnuts.</save_memory>"]]))
    async with app.run_test(size=SIZE) as pilot:
        pane = app.query_one(DiaryPane)
        assert not pane.has_class("visible")
        await pilot.press("ctrl+d")
        assert pane.has_class("visible")
        await type_and_send(pilot, "/remember He works night shifts.")
        await wait_for(pilot, lambda: "He works night shifts." in _pane_text(app))
        assert "written by you" in _pane_text(app)
        await type_and_send(pilot, "I can't eat walnuts.")
        await wait_for(pilot, lambda: "allergic to walnuts" in _pane_text(app))
        assert texts(app)[-1] == ("Mika", "Noted.")


def _pane_text(app: OmoideApp) -> str:
    from textual.widgets import Markdown

    return app.query_one(DiaryPane).query_one(Markdown).source


async def test_reopening_shows_the_same_chat(store: Store) -> None:
    app = await make_app(store, ScriptedBackend([["See you tomorrow."]]))
    async with app.run_test(size=SIZE) as pilot:
        await type_and_send(pilot, "Bye!")
        await wait_for(pilot, lambda: texts(app)[-1] == ("Mika", "See you tomorrow."))
    again = await make_app(store, ScriptedBackend())
    async with again.run_test(size=SIZE):
        assert texts(again)[-2:] == [("Kai", "Bye!"), ("Mika", "See you tomorrow.")]


async def test_branch_restore_rewinds_the_transcript_and_the_diary(store: Store) -> None:
    backend = ScriptedBackend([["Hm?"], ["Yes.<save_memory>He confessed.</save_memory>"]])
    app = await make_app(store, backend)
    async with app.run_test(size=SIZE) as pilot:
        await type_and_send(pilot, "Can I tell you something?")
        await wait_for(pilot, lambda: texts(app)[-1] == ("Mika", "Hm?"))
        await type_and_send(pilot, "/branch save before_confession")
        await pilot.press("ctrl+d")
        await type_and_send(pilot, "I like you.")
        await wait_for(pilot, lambda: "He confessed." in _pane_text(app))
        await type_and_send(pilot, "/branch restore before_confession")
        await wait_for(pilot, lambda: texts(app)[-1] == ("Mika", "Hm?"))
        assert "He confessed." not in _pane_text(app)
        assert any("saved as 'auto-" in n for n in notices(app))


def _restore_hint(app: OmoideApp) -> str:
    """The branch a notice tells you to restore ("/branch restore NAME brings ...")."""
    import re

    found = [m.group(1) for n in notices(app) if (m := re.search(r"/branch restore (\S+) brings", n))]
    assert found, notices(app)
    return found[-1]


async def test_undo_keeps_the_old_path_under_the_name_its_notice_gives(store: Store) -> None:
    app = await make_app(store, ScriptedBackend([["The kettle is on."], ["Tea it is."]]))
    async with app.run_test(size=SIZE) as pilot:
        await type_and_send(pilot, "Coffee, please.")
        await wait_for(pilot, lambda: texts(app)[-1] == ("Mika", "The kettle is on."))
        await type_and_send(pilot, "/undo")
        await wait_for(pilot, lambda: len(texts(app)) == 1)
        name = _restore_hint(app)
        await type_and_send(pilot, "Tea, please.")  # the story goes on elsewhere
        await wait_for(pilot, lambda: texts(app)[-1] == ("Mika", "Tea it is."))
        await type_and_send(pilot, f"/branch restore {name}")
        await wait_for(pilot, lambda: texts(app)[-1] == ("Mika", "The kettle is on."))
        assert texts(app)[-2] == ("Kai", "Coffee, please.")
        assert name in [b.name for b in await app.session.tree.branches()]


async def test_edit_keeps_the_old_path_under_the_name_its_notice_gives(store: Store) -> None:
    app = await make_app(store, ScriptedBackend([["Black, then."], ["With milk, then."]]))
    async with app.run_test(size=SIZE) as pilot:
        await type_and_send(pilot, "Coffee, black.")
        await wait_for(pilot, lambda: texts(app)[-1] == ("Mika", "Black, then."))
        await type_and_send(pilot, "/edit Coffee with milk.")
        await wait_for(pilot, lambda: texts(app)[-1] == ("Mika", "With milk, then.") and not app.turn_running)
        assert ("Kai", "Coffee, black.") not in texts(app)
        name = _restore_hint(app)
        await type_and_send(pilot, f"/branch restore {name}")
        await wait_for(pilot, lambda: texts(app)[-1] == ("Mika", "Black, then."))
        assert texts(app)[-2] == ("Kai", "Coffee, black.")


async def test_the_prompt_inspector_shows_the_layers(store: Store) -> None:
    app = await make_app(store, ScriptedBackend([["Hi."]]))
    async with app.run_test(size=SIZE) as pilot:
        await type_and_send(pilot, "Hello")
        await wait_for(pilot, lambda: texts(app)[-1] == ("Mika", "Hi."))
        await pilot.press("ctrl+p")
        await pilot.pause()
        from textual.widgets import DataTable

        table = app.screen.query_one("#layers", DataTable)
        assert [str(table.get_row_at(i)[0]) for i in range(table.row_count)] == ["card", "memory", "window", "tail"]
        summary = str(app.screen.query_one("#inspector-summary").render())
        assert "Total:" in summary and "Dropped to fit: nothing" in summary


async def test_a_long_chat_keeps_the_mounted_widgets_bounded(store: Store) -> None:
    from omoide.tui.widgets.transcript import MAX_MOUNTED, PAGE

    app = await long_chat_app(store, 400)
    async with app.run_test(size=SIZE) as pilot:
        # A screenful first, the newest messages; the rest of the page after that paint.
        assert PAGE > len(app.transcript.views()) >= app.transcript.screenful()
        assert app.transcript.views()[-1].text == "line 399"
        await wait_for(pilot, lambda: app.transcript.whole)
        assert len(app.transcript.views()) == PAGE and app.transcript.views()[-1].text == "line 399"
        assert app.transcript.views()[0].text == f"line {399 - PAGE + 1}"
        for _ in range(5):
            await app.transcript.load_older()
        await pilot.pause()
        assert len(app.transcript.views()) <= MAX_MOUNTED
        assert app.transcript.views()[0].text == f"line {399 - PAGE * 6 + 1}"
        await pilot.press("ctrl+end")
        await pilot.pause()
        assert app.transcript.views()[-1].text == "line 399"
        await pilot.press("ctrl+home")
        await wait_for(pilot, lambda: app.transcript.whole and len(app.transcript.views()) == PAGE)
        assert app.transcript.views()[0].text == "*waves* Hello, Kai!"
        assert await app.transcript.load_newer() == PAGE
        assert app.transcript.views()[-1].text == f"line {2 * PAGE - 2}"


async def test_restoring_while_a_reply_streams_stops_it_and_keeps_it_on_the_old_branch(store: Store) -> None:
    hold = asyncio.Event()
    app = await make_app(store, ScriptedBackend([["Hm?"], ["I was going to say ", hold, "something else"]]))
    async with app.run_test(size=SIZE) as pilot:
        await type_and_send(pilot, "Hey")
        await wait_for(pilot, lambda: texts(app)[-1] == ("Mika", "Hm?"))
        await type_and_send(pilot, "/branch save calm")
        await type_and_send(pilot, "Tell me a secret")
        await wait_for(pilot, lambda: app.reply_view is not None and app.reply_view.text == "I was going to say ")
        await type_and_send(pilot, "/branch restore calm")
        await wait_for(pilot, lambda: texts(app)[-1] == ("Mika", "Hm?") and not app.turn_running)
        autosave = next(b for b in await app.session.tree.branches() if b.auto)
        cut = await store.messages.get(autosave.message_id)
        assert cut.status is MessageStatus.INTERRUPTED and cut.content == "I was going to say"


async def test_search_results_jump_to_the_message_and_goto_finds_a_date(store: Store) -> None:
    from datetime import UTC, datetime, timedelta

    from omoide.tui.screens.search import SearchScreen
    from omoide.tui.widgets.transcript import PAGE

    app = await long_chat_app(store, 300, lambda i: "the lighthouse at dawn" if i == 20 else f"line {i}")
    async with app.run_test(size=SIZE) as pilot:
        assert "the lighthouse at dawn" not in [v.text for v in app.transcript.views()]
        await type_and_send(pilot, "/search lighthouse")
        await wait_for(pilot, lambda: isinstance(app.screen, SearchScreen))
        await pilot.press("enter")
        await wait_for(pilot, lambda: "the lighthouse at dawn" in [v.text for v in app.transcript.views()])
        assert len(app.transcript.views()) <= PAGE
        await type_and_send(pilot, "/goto #2")
        await wait_for(pilot, lambda: app.transcript.views()[0].text == "*waves* Hello, Kai!")
        tomorrow = (datetime.now(UTC) + timedelta(days=1)).astimezone().strftime("%Y-%m-%d")
        await type_and_send(pilot, f"/goto {tomorrow}")
        await wait_for(pilot, lambda: any("Nothing was written on or after" in n for n in notices(app)))
        await type_and_send(pilot, "/goto yesterday-ish")
        await wait_for(pilot, lambda: any("not a date I can read" in n for n in notices(app)))
        greeting = app.transcript.views()[0].message
        aside = await store.messages.add(greeting.chat_id, greeting.id, Role.USER, "a road not taken", move_head=False)
        await type_and_send(pilot, f"/goto #{aside.id}")
        await wait_for(pilot, lambda: any(f"Message #{aside.id} is on a path of the story no saved branch holds" in n for n in notices(app)))
        assert "a road not taken" not in [v.text for v in app.transcript.views()]


async def test_the_import_screen_imports_a_card_and_explains_a_bad_one(store: Store, tmp_path: Path) -> None:
    from omoide.characters.library import find_character
    from omoide.tui.screens.import_card import ImportCardScreen

    bad = tmp_path / "bad.json"
    bad.write_text("{oops")
    good = Path(__file__).parents[1] / "data" / "cards" / "v2_orin.json"
    app = await make_app(store, ScriptedBackend())
    async with app.run_test(size=SIZE) as pilot:
        await type_and_send(pilot, f"/import {bad}")
        await wait_for(pilot, lambda: isinstance(app.screen, ImportCardScreen))
        await pilot.press("enter")
        await wait_for(pilot, lambda: "invalid JSON" in str(app.screen.query_one("#import-error").render()))
        app.screen.query_one("#card-path").value = str(good)
        await pilot.press("enter")
        await wait_for(pilot, lambda: any("Imported Orin as 'orin'" in n for n in notices(app)))
    assert find_character("orin").name == "Orin"


async def test_keys_can_be_remapped_from_the_config(store: Store) -> None:
    settings = Settings(user_name="Kai", keymap={"chat.diary": "f2"})
    session = await ChatSession.open(store, MIKA, settings, ScriptedBackend())
    app = OmoideApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f2")
        await pilot.pause()
        assert app.query_one(DiaryPane).has_class("visible")


async def test_remember_shows_the_hidden_diary_pane_with_the_new_line_and_one_diary_hides_it(store: Store) -> None:
    app = await make_app(store, ScriptedBackend())
    async with app.run_test(size=SIZE) as pilot:
        pane = app.query_one(DiaryPane)
        assert not pane.display
        await type_and_send(pilot, "/remember He works night shifts.")
        await wait_for(pilot, lambda: "He works night shifts." in _pane_text(app))
        await pilot.pause()
        assert pane.display and pane.region.width > 0, "the pane must be on screen, not just marked visible"
        await type_and_send(pilot, "/diary")
        await wait_for(pilot, lambda: not pane.display)
        assert pane.region.width == 0


async def test_the_garbage_collector_held_for_start_up_is_back_after_the_first_paint(store: Store) -> None:
    """`omoide` holds the collector until the chat is drawn (omoide.startup); a chat
    left without it would grow without bound."""
    import gc

    from omoide.startup import hold_gc, release_gc

    app = await make_app(store, ScriptedBackend())
    hold_gc()
    try:
        assert not gc.isenabled()
        async with app.run_test(size=SIZE) as pilot:
            await wait_for(pilot, gc.isenabled)
            assert texts(app) == [("Mika", "*waves* Hello, Kai!")]
    finally:
        release_gc()
        gc.enable()


async def test_the_branch_list_shows_each_branchs_own_last_message_and_marks_the_current_one(store: Store) -> None:
    """Issue 42: with replies that read alike, every branch showed the same "last
    message", and nothing said which one the chat was at."""
    from textual.widgets import DataTable

    app = await make_app(store, ScriptedBackend(default=lambda m: ["Mm."]))
    async with app.run_test(size=SIZE) as pilot:
        await type_and_send(pilot, "one")
        await wait_for(pilot, lambda: len(texts(app)) == 3 and not app.turn_running)
        await type_and_send(pilot, "/branch save first")
        await wait_for(pilot, lambda: any("Saved branch 'first'" in n for n in notices(app)))
        await type_and_send(pilot, "two")
        await wait_for(pilot, lambda: len(texts(app)) == 5 and not app.turn_running)
        await type_and_send(pilot, "/branch save second")
        await wait_for(pilot, lambda: any("Saved branch 'second'" in n for n in notices(app)))
        await pilot.press("ctrl+b")
        await wait_for(pilot, lambda: bool(app.screen.query("#branches")))
        table = app.screen.query_one("#branches", DataTable)
        rows = {str(table.get_row_at(i)[1]): [str(cell) for cell in table.get_row_at(i)] for i in range(table.row_count)}
        assert rows["first"][0] == "" and rows["second"][0] == "●"
        assert rows["first"][3] == "#3 Mika: Mm." and rows["second"][3] == "#5 Mika: Mm."
