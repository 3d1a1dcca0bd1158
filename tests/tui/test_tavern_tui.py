"""SillyTavern parity in the TUI: the lore budget notice, and the notes in /prompt."""

from __future__ import annotations

from omoide.characters.model import Character, LoreEntry, Lorebook
from omoide.config.settings import Settings
from omoide.chat.session import ChatSession
from omoide.store import Store
from omoide.tui.app import OmoideApp
from tests.scripted import ScriptedBackend
from tests.tui.test_app import SIZE, notices, type_and_send, wait_for


async def test_constant_lore_the_budget_drops_is_a_notice(store: Store) -> None:
    """Issue 24: the budget notice reaches the TUI, not only the log."""
    book = Lorebook(entries=[LoreEntry(keys=[], content="The harbour town of Kesh. " * 40, constant=True, name="Kesh")])
    character = Character(id="mika", name="Mika", first_message="Hi.", character_book=book,
                          extensions={"depth_prompt": {"prompt": "Mika hums.", "depth": 0}})
    session = await ChatSession.open(store, character, Settings(user_name="Kai", context_size=1024, max_tokens=100),
                                     ScriptedBackend(default=lambda m: ["Mm."]))
    app = OmoideApp(session)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await type_and_send(pilot, "hello")
        await wait_for(pilot, lambda: any("Lore left out: 'Kesh'" in n for n in notices(app)))
        await type_and_send(pilot, "/prompt")
        await wait_for(pilot, lambda: type(app.screen).__name__ == "InspectorScreen")
        from textual.widgets import DataTable

        table = app.screen.query_one("#layers", DataTable)
        assert "character_note" in [str(table.get_row_at(i)[0]) for i in range(table.row_count)]


async def test_a_card_too_long_for_the_context_is_a_notice_and_in_prompt(store: Store) -> None:
    """Issue 33, item 13: the card cut to fit the context is said in the TUI and listed by /prompt."""
    character = Character(id="mika", name="Mika", first_message="Hi.", description="Mika remembers everything. " * 2000)
    session = await ChatSession.open(store, character, Settings(user_name="Kai", context_size=2048, max_tokens=200),
                                     ScriptedBackend(default=lambda m: ["Mm."]))
    app = OmoideApp(session)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await type_and_send(pilot, "hello")
        await wait_for(pilot, lambda: any("Mika's card does not fit the context" in n and "description" in n
                                          for n in notices(app)))
        await type_and_send(pilot, "/prompt")
        await wait_for(pilot, lambda: type(app.screen).__name__ == "InspectorScreen")
        from textual.widgets import Static

        shown = " ".join(str(s.render()) for s in app.screen.query(Static))
        assert "the end of the card's description" in shown, shown


async def test_regex_scripts_change_what_is_shown_not_what_is_stored(store: Store) -> None:
    """Issue 33, item 14: the card's markdown-only scripts show the newest status bar as a
    quote and hide the older ones; the stored replies keep them."""
    import json
    from pathlib import Path

    from omoide.characters.cards import character_from_card
    from omoide.tui.widgets.message import MessageView

    raw = json.loads((Path(__file__).parent.parent / "data" / "cards" / "v2_statusbar.json").read_text(encoding="utf-8"))
    status = "\n\n<status>\nLocation: mid-bay\nTime: 23:55\nMood: wary\n</status>"
    session = await ChatSession.open(store, character_from_card(raw, character_id="wren"), Settings(user_name="Kai"),
                                     ScriptedBackend(default=lambda m: ["Sit anywhere.", status]))
    app = OmoideApp(session)
    async with app.run_test(size=SIZE) as pilot:
        views = lambda: list(app.query(MessageView))  # noqa: E731
        await wait_for(pilot, lambda: len(views()) == 1 and "Wren's status" in views()[0].shown)
        await type_and_send(pilot, "One ticket.")
        await wait_for(pilot, lambda: len(views()) == 3 and not views()[2].live and "Wren's status" in views()[2].shown)
        greeting = views()[0]
        assert "<status>" not in greeting.shown and "Wren's status" not in greeting.shown  # older: hidden
        assert "<status>" in greeting.text and "<status>" in views()[2].text  # the stored text keeps it
        assert "Location: mid-bay" in views()[2].shown and "Time:" not in views()[2].shown
