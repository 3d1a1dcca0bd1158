"""The first ten minutes in the TUI, through the Pilot (issue 23): /help whole
at 80x24 and 160x50, a failed reply's mark that outlives its notice and a
restart, one hint for an unknown command, the prompt size after a restore."""

from __future__ import annotations

import re

import pytest
import textual.notifications
from textual.containers import VerticalScroll
from textual.widgets._toast import Toast

from omoide.tui.slash import COMMANDS
from omoide.config.settings import Settings
from omoide.errors import BackendUnreachable
from omoide.chat.session import ChatSession
from omoide.store import Store
from omoide.tui.app import OmoideApp
from tests.scripted import ScriptedBackend
from tests.tui.test_app import MIKA, make_app, notices, type_and_send, wait_for


def screen_lines(app: OmoideApp) -> list[str]:
    """The screen as the terminal shows it, one string a row (Textual's own composited frame)."""
    return [strip.text for strip in app.screen._compositor.render_strips()]


def described(lines: list[str]) -> str:
    """The description column of /help's tables (rows of the view's content,
    without its border or scrollbar), the wrapped pieces joined."""
    pieces = [cells[1].strip() for cells in (line.split("│") for line in lines) if len(cells) == 2]
    return " ".join(" ".join(pieces).split())


@pytest.mark.parametrize("size", [(80, 24), (160, 50)])
async def test_help_shows_every_description_whole(store: Store, size: tuple[int, int]) -> None:
    app = await make_app(store, ScriptedBackend())
    async with app.run_test(size=size) as pilot:
        await type_and_send(pilot, "/help")
        await wait_for(pilot, lambda: len(app.screen_stack) > 1)
        await pilot.pause()
        body = app.screen.query_one(VerticalScroll)
        first = screen_lines(app)
        top = next(i for i, line in enumerate(first) if "Commands" in line)
        assert "╭" in first[top] and first[top + 1].strip("│ ") != "", "no empty line under the title"
        region = body.scrollable_content_region
        rows = lambda: [line[region.x : region.right] for line in screen_lines(app)[region.y : region.bottom]]  # noqa: E731
        seen, y = rows(), 0
        while y < body.max_scroll_y:  # page by page, as a reader would, keeping each row once
            step = min(region.height, body.max_scroll_y - y)
            y += step
            body.scroll_to(y=y, animate=False)
            await pilot.pause()
            seen += rows()[region.height - step :]
        text = described(seen)
        for spec in COMMANDS.values():
            assert " ".join(spec.summary.split()) in text, f"/{spec.name}: {spec.summary!r} is not whole on screen"
        assert body.max_scroll_x == 0  # nothing to scroll sideways: no horizontal scrollbar
        box = [line[region.x - 2 : region.right + 2] for line in screen_lines(app)[region.y : region.bottom]]
        assert not any(glyph in line for line in box for glyph in "▁▂▃▄▅▆▇█▔"), "no scrollbar glyph in the box"
        if body.max_scroll_y:
            assert "of" in str(body.border_subtitle) and "Esc closes" in str(body.border_subtitle)  # where you are, instead


async def test_an_unknown_command_gives_its_hint_once(store: Store) -> None:
    app = await make_app(store, ScriptedBackend())
    async with app.run_test(size=(100, 30)) as pilot:
        await type_and_send(pilot, "/hepl")
        await wait_for(pilot, lambda: bool(notices(app)))
        await pilot.pause()
        shown = notices(app)
        assert len(shown) == 1 and shown[0].count("/help") == 1, shown
        app.query_one("#input").value = ""
        await type_and_send(pilot, "/zzzz")
        await wait_for(pilot, lambda: len(notices(app)) == 2)
        assert notices(app)[1].count("/help") == 1, notices(app)


def toasts_gone(app: OmoideApp) -> bool:
    return not app.screen.query(Toast) and not list(app._notifications)


async def test_a_failed_reply_leaves_a_mark_that_outlives_its_notice_and_a_restart(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    error = BackendUnreachable("Cannot reach the server at http://127.0.0.1:9/v1 (ConnectError).", "Is it running? Check base_url.")
    app = await make_app(store, ScriptedBackend([error]))
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        await type_and_send(pilot, "Hello?")
        await wait_for(pilot, lambda: bool(app.screen.query(Toast)) and "did not answer" in "\n".join(screen_lines(app)))
        # 20 seconds later on the notices' own clock: the notice is gone...
        real_time = textual.notifications.time
        monkeypatch.setattr(textual.notifications, "time", lambda: real_time() + 20)
        app._refresh_notifications()
        await wait_for(pilot, lambda: toasts_gone(app))
        await pilot.pause()
        # ...and the mark is still under the message, saying what failed and what to do.
        screen = "\n".join(screen_lines(app))
        assert "Hello?" in screen
        assert "Mika did not answer: Cannot reach the server" in screen and "/regen tries again" in screen
        assert screen.index("Hello?") < screen.index("Mika did not answer")
    monkeypatch.setattr(textual.notifications, "time", real_time)  # not undo(): that would drop the conftest's OMOIDE_WELCOMED too
    # After a restart the mark is there again: it was stored with the failed reply.
    again = OmoideApp(await ChatSession.open(store, MIKA, Settings(user_name="Kai"), ScriptedBackend([["I'm here."]])))
    async with again.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        screen = "\n".join(screen_lines(again))
        assert "Mika did not answer: Cannot reach the server" in screen
        await type_and_send(pilot, "/regen")
        await wait_for(pilot, lambda: again.transcript.views()[-1].text == "I'm here.")
        await pilot.pause()
        assert "did not answer" not in "\n".join(screen_lines(again))


async def test_a_reply_cut_off_by_an_error_is_marked_too(store: Store) -> None:
    error = BackendUnreachable("The server stopped answering mid-reply (RemoteProtocolError).", "Try again.")
    app = await make_app(store, ScriptedBackend([["*smiles* Once upon ", error]]))
    async with app.run_test(size=(100, 30)) as pilot:
        await type_and_send(pilot, "A story?")
        await wait_for(pilot, lambda: "reply was cut off" in "\n".join(screen_lines(app)))
        assert "stopped answering mid-reply" in "\n".join(screen_lines(app))
        assert app.transcript.views()[-1].text.startswith("*smiles* Once upon")


async def test_the_prompt_size_follows_a_branch_restore(store: Store) -> None:
    long_reply = "word " * 400
    app = await make_app(store, ScriptedBackend([[long_reply], ["Short."]]))
    async with app.run_test(size=(120, 30)) as pilot:
        await type_and_send(pilot, "/branch save start")
        await pilot.pause()
        await type_and_send(pilot, "Tell me everything.")
        await wait_for(pilot, lambda: len(app.transcript.views()) == 3 and app.reply_view is None)
        await type_and_send(pilot, "More.")
        await wait_for(pilot, lambda: len(app.transcript.views()) == 5 and app.reply_view is None)
        status = app.query_one("StatusBar")
        after_long = int(re.search(r"prompt ~?(\d+) tok", status.render()).group(1))  # type: ignore[union-attr]
        await type_and_send(pilot, "/branch restore start")
        await wait_for(pilot, lambda: len(app.transcript.views()) == 1)
        await wait_for(pilot, lambda: re.search(r"prompt ~?(\d+) tok", status.render()) is not None
                       and int(re.search(r"prompt ~?(\d+) tok", status.render()).group(1)) < after_long - 200)  # type: ignore[union-attr]


async def test_the_prompt_inspector_says_how_an_estimate_was_made(store: Store) -> None:
    app = await make_app(store, ScriptedBackend([["Hello."]]))
    async with app.run_test(size=(120, 40)) as pilot:
        await type_and_send(pilot, "Hi")
        await wait_for(pilot, lambda: len(app.transcript.views()) == 3 and app.reply_view is None)
        await type_and_send(pilot, "/prompt")
        await wait_for(pilot, lambda: len(app.screen_stack) > 1)
        await pilot.pause()
        screen = "\n".join(screen_lines(app))
        assert "Total:" in screen and "estimate: estimate" not in screen and "estimated: estimate" not in screen
        assert "estimated from the text's length, 4 characters a token" in screen
