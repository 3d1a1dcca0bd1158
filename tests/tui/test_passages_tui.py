"""Memories that come to mind in the real TUI (Textual's Pilot): /prompt shows
the layer and why each passage came to mind; /amnesia passages hides it."""

from __future__ import annotations

from textual.widgets import DataTable, Static

from omoide.chat.session import ChatSession
from omoide.config.settings import Settings
from omoide.store import Store
from omoide.tui.app import OmoideApp
from omoide.tui.screens.inspector import InspectorScreen
from tests.integration.test_passages import MIKA, chat_calls, story
from tests.scripted import ScriptedBackend
from tests.tui.test_app import SIZE, type_and_send, wait_for


def layer_names(app: OmoideApp) -> list[str]:
    table = app.screen.query_one("#layers", DataTable)
    return [str(table.get_row_at(i)[0]) for i in range(table.row_count)]


async def test_prompt_shows_the_passages_layer_with_why_and_amnesia_hides_it(store: Store) -> None:
    chat_id, _ = await story(store, fillers=40)
    backend = ScriptedBackend(default=lambda m: ["Mm."])
    settings = Settings(user_name="Kai", summary_threshold=10_000)
    app = OmoideApp(await ChatSession.open(store, MIKA, settings, backend, chat_id=chat_id))
    async with app.run_test(size=SIZE) as pilot:
        await type_and_send(pilot, "Is the cat asleep on the radiator?")
        await wait_for(pilot, lambda: len(chat_calls(backend)) == 1 and app.reply_view is None)
        await pilot.press("ctrl+p")
        await wait_for(pilot, lambda: isinstance(app.screen, InspectorScreen))
        await wait_for(pilot, lambda: "passages" in layer_names(app))
        summary = str(app.screen.query_one("#inspector-summary", Static).render())
        assert "Memories that came to mind" in summary and "Kai: matched cat, radiator" in summary, summary
        assert "own replies" not in summary and "anyone's words alike" in summary  # no weight on who spoke
        shown = " ".join(str(w.render()) for w in app.screen.query(".layer-text"))
        assert "Biscuit-1001" in shown
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, InspectorScreen))

        await type_and_send(pilot, "/amnesia passages")
        await wait_for(pilot, lambda: app.session.chat.amnesia == ("passages",))
        await type_and_send(pilot, "Is the cat asleep on the radiator?")
        await wait_for(pilot, lambda: len(chat_calls(backend)) == 2 and app.reply_view is None)
        await pilot.press("ctrl+p")
        await wait_for(pilot, lambda: isinstance(app.screen, InspectorScreen))
        await wait_for(pilot, lambda: "window" in layer_names(app))
        assert "passages" not in layer_names(app)
        assert "Biscuit" not in str(chat_calls(backend)[-1])
