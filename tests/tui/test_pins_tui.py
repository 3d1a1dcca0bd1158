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


def status_tokens(app) -> str:  # type: ignore[no-untyped-def]
    from omoide.tui.widgets.status import StatusBar

    return app.query_one(StatusBar).tokens


async def test_the_inspector_and_the_token_count_follow_pin_and_amnesia_at_once(store: Store) -> None:
    """Issue 42: after /pin and /amnesia the status line's count and /prompt stayed as
    they were until the next message was sent."""
    from omoide.tui.screens.inspector import InspectorScreen

    backend = ScriptedBackend([["Sure."]])
    app = await make_app(store, backend)
    async with app.run_test(size=SIZE) as pilot:
        await type_and_send(pilot, "Hello.")
        await wait_for(pilot, lambda: texts(app)[-1] == ("Mika", "Sure.") and not app.turn_running)
        before = status_tokens(app)
        await type_and_send(pilot, "/pin " + "Kai keeps a lighthouse logbook of every storm since 1990. " * 8)
        await wait_for(pilot, lambda: status_tokens(app) not in (before, "prompt: counting…"))
        pinned = status_tokens(app)
        assert int(pinned.split()[1].lstrip("~")) > int(before.split()[1].lstrip("~")) + 80
        await pilot.press("ctrl+p")
        await wait_for(pilot, lambda: isinstance(app.screen, InspectorScreen))
        table = app.screen.query_one("#layers", DataTable)
        assert "pinned" in [str(table.get_row_at(i)[0]) for i in range(table.row_count)]
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, InspectorScreen))
        await type_and_send(pilot, "/amnesia pinned")
        await wait_for(pilot, lambda: status_tokens(app) not in (pinned, "prompt: counting…"))
        await pilot.press("ctrl+p")
        await wait_for(pilot, lambda: isinstance(app.screen, InspectorScreen))
        table = app.screen.query_one("#layers", DataTable)
        assert "pinned" not in [str(table.get_row_at(i)[0]) for i in range(table.row_count)]
        assert len(backend.calls) == 1  # counted again, not sent


async def test_page_down_and_end_scroll_the_inspector_while_its_table_has_the_focus(store: Store) -> None:
    from textual.containers import VerticalScroll

    from omoide.tui.screens.inspector import InspectorScreen

    app = await make_app(store, ScriptedBackend([["Sure."]]))
    async with app.run_test(size=(80, 24)) as pilot:
        await type_and_send(pilot, "Hello.")
        await wait_for(pilot, lambda: texts(app)[-1] == ("Mika", "Sure.") and not app.turn_running)
        await pilot.press("ctrl+p")
        await wait_for(pilot, lambda: isinstance(app.screen, InspectorScreen))
        await pilot.pause()
        table = app.screen.query_one("#layers", DataTable)
        table.focus()
        await pilot.pause()
        scroll = app.screen.query_one(VerticalScroll)
        assert table.has_focus and scroll.max_scroll_y > 0 and scroll.scroll_y == 0
        await pilot.press("pagedown")
        await wait_for(pilot, lambda: scroll.scroll_y > 0)
        await pilot.press("end")
        await wait_for(pilot, lambda: scroll.scroll_y == scroll.max_scroll_y)
        await pilot.press("home")
        await wait_for(pilot, lambda: scroll.scroll_y == 0)
