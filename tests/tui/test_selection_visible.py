"""The message picked with Ctrl+Up stands out from the others in every theme:
its background and its left bar differ clearly from an unpicked message's."""

from __future__ import annotations

import pytest
from textual.color import Color

from omoide.store import Store
from tests.scripted import ScriptedBackend
from tests.tui.test_app import SIZE, make_app, texts, type_and_send, wait_for


def distance(a: Color, b: Color) -> float:
    """How far apart two colours are, 0 to 441 (RGB space)."""
    return float(((a.r - b.r) ** 2 + (a.g - b.g) ** 2 + (a.b - b.b) ** 2) ** 0.5)


def drawn_background(view) -> Color:  # type: ignore[no-untyped-def]
    """The background the message's cells are drawn with (its own over what is behind it)."""
    return view.background_colors[1]


@pytest.mark.parametrize("theme", ["textual-dark", "nord", "gruvbox", "textual-light", "catppuccin-latte"])
async def test_the_selected_message_is_clearly_visible(store: Store, theme: str) -> None:
    app = await make_app(store, ScriptedBackend([["Fine."]]))
    async with app.run_test(size=SIZE) as pilot:
        app.theme = theme
        await type_and_send(pilot, "Hello")
        await wait_for(pilot, lambda: len(texts(app)) == 3 and app.reply_view is None)
        user, reply = app.transcript.views()[-2:]
        await pilot.press("ctrl+up")
        await wait_for(pilot, lambda: reply.has_focus)
        await pilot.pause()
        picked, other = drawn_background(reply), drawn_background(user)
        assert distance(picked, other) >= 40, (theme, picked.hex, other.hex)
        bar, other_bar = reply.styles.border_left[1], user.styles.border_left[1]
        assert distance(bar, other_bar) >= 40 or reply.styles.border_left[0] != user.styles.border_left[0]
