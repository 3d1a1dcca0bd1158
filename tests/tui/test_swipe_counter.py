"""Swipes you can count: the newest reply says which of its swipes it is
(`‹ 2/3 ›`), and a reply stopped before its first word is no swipe."""

from __future__ import annotations

import asyncio

from omoide.store import Store
from tests.scripted import ScriptedBackend
from tests.tui.test_app import SIZE, make_app, notices, texts, type_and_send, wait_for


async def test_the_newest_reply_shows_its_swipe_counter_and_an_empty_stop_is_not_a_swipe(store: Store) -> None:
    hold = asyncio.Event()
    app = await make_app(store, ScriptedBackend([[hold, "never shown"], ["First."], ["Second."], ["Third."]]))
    async with app.run_test(size=SIZE) as pilot:
        await type_and_send(pilot, "Hello?")
        await wait_for(pilot, lambda: app.reply_view is not None)
        await pilot.press("escape")  # before the first word
        await wait_for(pilot, lambda: app.reply_view is None and not app.turn_running)
        await type_and_send(pilot, "/regen")
        await wait_for(pilot, lambda: texts(app)[-1] == ("Mika", "First.") and app.reply_view is None)
        newest = app.transcript.views()[-1]
        assert "‹" not in newest.meta  # the stopped, empty reply does not count: one reply, no swipes
        group, _ = await app.session.tree.swipes()
        assert [m.content for m in group] == ["First."]

        for reply in ("Second.", "Third."):
            await type_and_send(pilot, "/regen")
            await wait_for(pilot, lambda: texts(app)[-1] == ("Mika", reply) and app.reply_view is None)
        await wait_for(pilot, lambda: app.transcript.views()[-1].meta.endswith("‹ 3/3 ›"))
        await pilot.press("ctrl+left")
        await wait_for(pilot, lambda: texts(app)[-1] == ("Mika", "Second."))
        await wait_for(pilot, lambda: app.transcript.views()[-1].meta.endswith("‹ 2/3 ›"))
        assert any("Swipe 2 of 3" in n for n in notices(app))

        await type_and_send(pilot, "Thanks")  # a new exchange: the counter stays with the reply it counts
        await wait_for(pilot, lambda: len(texts(app)) >= 2 and texts(app)[-2] == ("Kai", "Thanks") and app.reply_view is None)
        assert all("‹" not in view.meta for view in app.transcript.views()[:-1])
