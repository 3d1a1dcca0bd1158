"""The memo book in the real TUI, through Textual's Pilot, on real SQLite files."""

from __future__ import annotations

import os

import sys
from pathlib import Path

from textual.widgets import DataTable, TextArea

from omoide.characters.model import Character
from omoide.config.settings import Settings
from omoide.domain.chat import MemoAuthor
from omoide.chat.session import ChatSession
from omoide.store import Store
from omoide.tui.app import OmoideApp
from omoide.tui.memos import FOUND
from omoide.tui.screens.memos import MemoBookScreen, MemoEditor
from tests.scripted import ScriptedBackend
from tests.tui.test_app import SIZE, notices, type_and_send, wait_for

sys.path.insert(0, str(Path(__file__).parents[2] / "benchmarks"))
from make_chat import make_chat  # noqa: E402

MIKA = Character(id="mika", name="Mika", first_message="*waves* Hello, {{user}}!")
GOOD = "【Highlight 1】: Kai named the bakery cat Kinako.\n【Highlight 2】: Mika gave Kai her grandmother's whisk."


async def book_app(store: Store, summarizer: ScriptedBackend, chat: ScriptedBackend | None = None, **kw: object) -> OmoideApp:
    settings = Settings(user_name="Kai", memory_style="memos", **kw)  # type: ignore[arg-type]
    session = await ChatSession.open(store, MIKA, settings, chat or ScriptedBackend(default=lambda m: ["*nods*"]), summarizer=summarizer)
    return OmoideApp(session)


def rows(screen: MemoBookScreen) -> list[list[str]]:
    table = screen.query_one(DataTable)
    return [[str(cell) for cell in table.get_row_at(i)] for i in range(table.row_count)]


async def test_the_book_shows_memos_and_gaps_and_edits_writes_hides_and_retries(tmp_path: Path) -> None:
    store = await Store.open(tmp_path / "omoide.db")
    summarizer = ScriptedBackend([[GOOD], ["*giggles* Hi!"]])
    chat = ScriptedBackend(default=lambda m: ["*nods*"])
    app = await book_app(store, summarizer, chat)
    async with app.run_test(size=SIZE) as pilot:
        for i in range(8):
            await type_and_send(pilot, f"Story beat {i}")
            await wait_for(pilot, lambda: not app.turn_running and len(app.transcript.views()) >= 3 + 2 * i)
            await app.session.wait_for_memory_work()
        await wait_for(pilot, lambda: app.query_one("StatusBar").memory.startswith("memo gap"))
        await pilot.press("ctrl+o")
        await wait_for(pilot, lambda: isinstance(app.screen, MemoBookScreen) and len(rows(app.screen)) == 2)
        book = app.screen
        assert isinstance(book, MemoBookScreen)
        gap, made = rows(book)  # newest first
        assert made[2] == "made" and "Kai named the bakery cat Kinako. · Mika gave Kai her grandmother's whisk." in made[3]
        assert gap[2] == "gap" and "no memo for messages #" in gap[3] and "roleplay" in gap[3]
        # r fills the gap in the background
        summarizer.add(["【Highlight 1】: Kai promised to bring Mika to the autumn fair."])
        await pilot.press("r")
        await wait_for(pilot, lambda: rows(book)[0][2] == "made")
        assert "autumn fair" in rows(book)[0][3]
        # e edits the memo under the cursor; the original is kept
        book.query_one(DataTable).move_cursor(row=1)
        await pilot.press("e")
        await wait_for(pilot, lambda: isinstance(app.screen, MemoEditor))
        app.screen.query_one(TextArea).text = "Kai named the bakery cat Daifuku.\nMika gave Kai a whisk."
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: app.screen is book and rows(book)[1][2] == "edited by you")
        # n writes a memo at this point of the story
        await pilot.press("n")
        await wait_for(pilot, lambda: isinstance(app.screen, MemoEditor))
        app.screen.query_one(TextArea).text = "Kai and Mika once drove to the sea in a borrowed van."
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: app.screen is book and len(rows(book)) == 3)
        assert rows(book)[0][2] == "written by you"
        # d hides the edited memo (and d again would show it)
        book.query_one(DataTable).move_cursor(row=2)
        await pilot.press("d")
        await wait_for(pilot, lambda: rows(book)[2][2] == "edited by you (hidden)")
        await pilot.press("escape")
        await type_and_send(pilot, "Do you remember the sea?")
        await wait_for(pilot, lambda: not app.turn_running and app.reply_view is None)
        prompt = "\n".join(str(m["content"]) for m in chat.calls[-1]["messages"])
        assert "borrowed van" in prompt and "Daifuku" not in prompt and "Kinako" not in prompt
    versions = await store.memos.history(app.session.chat.id)
    assert [v.version_author for v in versions if v.author is MemoAuthor.MODEL][:3] == [MemoAuthor.MODEL, MemoAuthor.USER, MemoAuthor.USER]
    await store.close()


async def test_help_lists_the_book_and_an_empty_book_says_what_to_do(tmp_path: Path) -> None:
    store = await Store.open(tmp_path / "omoide.db")
    app = await book_app(store, ScriptedBackend())
    async with app.run_test(size=SIZE) as pilot:
        await type_and_send(pilot, "/help")
        from rich.console import Console

        from omoide.tui.screens.help import HelpScreen, help_tables

        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
        console = Console(width=200, record=True, file=open(os.devnull, "w"))
        console.print(help_tables(app.screen.commands_help, app.screen.keys))
        text = console.export_text()
        assert "/memos" in text and "Memo book" in text
        await pilot.press("escape")
        await type_and_send(pilot, "/memos")
        await wait_for(pilot, lambda: isinstance(app.screen, MemoBookScreen))
        assert "No memos yet" in str(app.screen.query_one("#memo-detail").render())
        await pilot.press("r")
        await wait_for(pilot, lambda: any("Only a gap" in n for n in notices(app)))
    await store.close()


async def test_enter_on_a_memo_jumps_to_its_batch_in_a_100k_message_chat() -> None:
    chat_id = await make_chat(100_000, "mika", memos=True)
    store = await Store.open()
    settings = Settings(user_name="Kai", memory_style="memos")
    session = await ChatSession.open(store, MIKA, settings, ScriptedBackend(), chat_id=chat_id)
    app = OmoideApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+o")
        await wait_for(pilot, lambda: isinstance(app.screen, MemoBookScreen) and app.screen.memos != [], timeout=60)
        book = app.screen
        assert isinstance(book, MemoBookScreen) and book.memos[0].anchor_depth == 99_999, "newest first"
        await wait_for(pilot, lambda: book.complete, timeout=120)
        assert len(book.memos) == 12_500 == book.query_one(DataTable).row_count
        row = len(book.memos) - 4  # the fourth batch of the story: depths 24-31
        target = book.memos[row]
        book.query_one(DataTable).move_cursor(row=row)
        await pilot.press("enter")
        await wait_for(pilot, lambda: any(v.message.id == target.first_id for v in app.transcript.views()), timeout=60)
        landed = next(v for v in app.transcript.views() if v.message.id == target.first_id)
        assert landed.has_class(FOUND) and landed.message.depth == 24
        assert not app.transcript.at_live_end and len(app.transcript.views()) <= 40
    await store.close()


async def test_search_finds_a_memo_and_enter_jumps_to_its_batch(tmp_path: Path) -> None:
    from omoide.tui.screens.search import SearchScreen

    store = await Store.open(tmp_path / "omoide.db")
    app = await book_app(store, ScriptedBackend(default=lambda m: ["【Highlight 1】: Kai found the [lighthouse] key under the mat."]))
    async with app.run_test(size=SIZE) as pilot:
        for i in range(4):
            await type_and_send(pilot, f"Beat {i}")
            await wait_for(pilot, lambda: not app.turn_running and app.reply_view is None)
            await app.session.wait_for_memory_work()
        await type_and_send(pilot, "/search lighthouse")
        await wait_for(pilot, lambda: isinstance(app.screen, SearchScreen))
        screen = app.screen
        assert isinstance(screen, SearchScreen)
        [row] = screen.rows
        assert row[2].startswith("memo #") and row[3] == "memo book" and "[lighthouse]" in row[4]
        cells = [str(c) for c in screen.query_one(DataTable).get_row_at(0)]
        assert "[lighthouse]" in cells[4], "the match shows as typed, brackets and all"
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.screen is not screen)
        first = app.transcript.views()[0]
        assert first.message.parent_id is None and any("Message #" in n for n in notices(app))
    await store.close()


async def test_ctrl_end_and_ctrl_home_move_the_cursor_in_the_memo_editor(tmp_path: Path) -> None:
    """Issue 42: Ctrl+End did not move the cursor in the memo editor (the chat behind took it)."""
    store = await Store.open(tmp_path / "omoide.db")
    app = await book_app(store, ScriptedBackend())
    async with app.run_test(size=SIZE) as pilot:
        await type_and_send(pilot, "/memos")
        await wait_for(pilot, lambda: isinstance(app.screen, MemoBookScreen))
        await pilot.press("n")
        await wait_for(pilot, lambda: isinstance(app.screen, MemoEditor))
        area = app.screen.query_one(TextArea)
        area.text = "Kai named the bakery cat Kinako.\nMika gave Kai a whisk.\nThey went to the sea."
        area.move_cursor((0, 3))
        await pilot.press("ctrl+end")
        await wait_for(pilot, lambda: area.cursor_location == (2, len("They went to the sea.")))
        await pilot.press("ctrl+home")
        await wait_for(pilot, lambda: area.cursor_location == (0, 0))
        await pilot.press("ctrl+shift+end")
        await wait_for(pilot, lambda: area.selected_text == area.text)
        assert isinstance(app.screen, MemoEditor)
    await store.close()
