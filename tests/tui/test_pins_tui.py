"""/pin, /pins and /unpin in the real TUI, through Pilot, on a real SQLite file."""

from __future__ import annotations

from textual.widgets import DataTable

from omoide.store import Store
from omoide.tui.screens.text_modal import TextModal
from tests.scripted import ScriptedBackend
from tests.tui.test_app import SIZE, make_app, notices, texts, type_and_send, wait_for


def system(backend: ScriptedBackend) -> str:
    return str(backend.calls[-1]["messages"][0]["content"])


async def test_pin_pins_lists_and_unpin_removes(store: Store) -> None:
    backend = ScriptedBackend([["Noted.<save_memory>Kai fears thunder.</save_memory>"], ["Sure."], ["Right."]])
    app = await make_app(store, backend)
    async with app.run_test(size=SIZE) as pilot:
        await type_and_send(pilot, "/pin Kai's cat is called Biscuit.")
        await wait_for(pilot, lambda: any("Pinned #" in n and "Biscuit" in n for n in notices(app)))
        await type_and_send(pilot, "I hate storms.")
        await wait_for(pilot, lambda: texts(app)[-1] == ("Mika", "Noted.") and not app.turn_running)
        assert "- Kai's cat is called Biscuit." in system(backend)
        await pilot.press("ctrl+p")  # /prompt shows it as a layer of its own, after the card, before the memory
        await wait_for(pilot, lambda: bool(app.screen.query("#layers")))
        table = app.screen.query_one("#layers", DataTable)
        assert [str(table.get_row_at(i)[0]) for i in range(table.row_count)] == ["card", "pinned", "memory", "window", "tail"]
        await pilot.press("escape")
        await wait_for(pilot, lambda: not app.screen.query("#layers"))

        await type_and_send(pilot, "/pin")  # the last message
        await wait_for(pilot, lambda: any("Pinned #" in n and "Mika: Noted." in n for n in notices(app)))
        await type_and_send(pilot, "/pin diary 1")
        await wait_for(pilot, lambda: any("Pinned #" in n and "Kai fears thunder." in n for n in notices(app)))

        await type_and_send(pilot, "/pins")
        await wait_for(pilot, lambda: isinstance(app.screen, TextModal))
        listing = app.screen.markdown  # type: ignore[attr-defined]
        pins = await app.session.pins.list()
        assert [p.content for p in pins] == ["Kai's cat is called Biscuit.", "Mika: Noted.", "Kai fears thunder."]
        assert all(f"#{p.id}** {p.content}" in listing for p in pins)
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, TextModal))

        await type_and_send(pilot, f"/unpin {pins[0].id}")
        await wait_for(pilot, lambda: any(n.startswith(f"Unpinned #{pins[0].id}") for n in notices(app)))
        await type_and_send(pilot, "Good night.")
        await wait_for(pilot, lambda: texts(app)[-1] == ("Mika", "Sure.") and not app.turn_running)
        assert "Biscuit" not in system(backend)
        assert "- Mika: Noted." in system(backend) and "- Kai fears thunder." in system(backend)

        await type_and_send(pilot, "/unpin 999")
        await wait_for(pilot, lambda: any("no pin #999" in n for n in notices(app)))
        await type_and_send(pilot, "/unpin")
        await wait_for(pilot, lambda: any("/unpin needs the number of a pin" in n for n in notices(app)))
