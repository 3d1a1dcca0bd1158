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
