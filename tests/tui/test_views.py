"""What the user sees: rendering, streaming, the status bar, the chat list,
and failures that must become notices instead of crashes."""

from __future__ import annotations

import asyncio
import threading

import pytest
from textual.widgets import DataTable, Markdown
from textual.widgets._markdown import MarkdownParagraph

from omoide.config.settings import Settings
from omoide.domain.chat import Role
from omoide.memory.events import MemoryWorkDone, MemoryWorkFailed, MemoryWorkStarted
from omoide.chat.session import ChatSession
from omoide.store import Store
from omoide.tui.app import OmoideApp
from omoide.tui.widgets.message import MessageView
from omoide.tui.widgets.status import StatusBar
from tests.scripted import ScriptedBackend
from tests.tui.test_app import MIKA, SIZE, long_chat_app, make_app, notices, texts, type_and_send, wait_for


def rendered_lines(view: MessageView) -> list[list[tuple[str, bool]]]:
    """Each paragraph's first line as (text, italic) segments, as drawn on screen."""
    lines = []
    for paragraph in view.query(MarkdownParagraph):
        strip = paragraph.render_line(0)
        lines.append([(seg.text, bool(seg.style and seg.style.italic)) for seg in strip if seg.text.strip()])
    return lines


def shown_text(view: MessageView) -> str:
    return view.query_one(Markdown).source


def status_text(app: OmoideApp) -> str:
    return str(app.query_one(StatusBar).render())


async def test_roleplay_actions_render_in_italics_and_user_asterisks_survive(store: Store) -> None:
    app = await make_app(store, ScriptedBackend([["*smiles* ", "Fresh bread."]]))
    async with app.run_test(size=SIZE) as pilot:
        await type_and_send(pilot, "2 * 3 * 4 = 24, *grins")
        await wait_for(pilot, lambda: texts(app)[-1] == ("Mika", "*smiles* Fresh bread.") and app.reply_view is None)
        await pilot.pause()
        user, reply = app.transcript.views()[-2:]
        assert rendered_lines(reply) == [[("smiles", True), (" Fresh bread.", False)]]
        assert rendered_lines(user) == [[("2 * 3 * 4 = 24, *grins", False)]]
        assert user.meta.startswith("Kai · ") and reply.meta.startswith("Mika · ")


async def test_angle_brackets_are_text_not_html_that_vanishes(store: Store) -> None:
    app = await make_app(store, ScriptedBackend([["She whispered <secret> and *leaned* closer. I <3 you."]]))
    async with app.run_test(size=SIZE) as pilot:
        await type_and_send(pilot, "Tell me <nothing> & <i>x</i>")
        await wait_for(pilot, lambda: app.reply_view is None and len(texts(app)) == 3)
        await pilot.pause()
        user, reply = app.transcript.views()[-2:]
        assert rendered_lines(user) == [[("Tell me <nothing> & <i>x</i>", False)]]
        assert rendered_lines(reply) == [
            [("She whispered <secret> and ", False), ("leaned", True), (" closer. I <3 you.", False)]
        ]


async def test_a_paused_stream_shows_what_arrived_and_is_marked_as_writing(store: Store) -> None:
    hold = asyncio.Event()
    app = await make_app(store, ScriptedBackend([["Once upon ", "a time,", hold, " the end."]]))
    async with app.run_test(size=SIZE) as pilot:
        await type_and_send(pilot, "A story?")
        await wait_for(pilot, lambda: app.reply_view is not None and shown_text(app.reply_view) == "Once upon a time,")
        assert "writing…" in app.reply_view.meta and "(interrupted)" not in app.reply_view.meta
        hold.set()
        await wait_for(pilot, lambda: app.reply_view is None)
        view = app.transcript.views()[-1]
        assert shown_text(view) == "Once upon a time, the end." and "writing" not in view.meta


async def test_streaming_updates_the_widget_at_most_about_twenty_times_a_second(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    writes = 0
    original = Markdown.append

    def counting(self: Markdown, markdown: str):  # type: ignore[no-untyped-def]
        nonlocal writes
        writes += 1
        return original(self, markdown)

    monkeypatch.setattr(Markdown, "append", counting)
    chunks = [f"word{i} " for i in range(200)]
    app = await make_app(store, ScriptedBackend([chunks], delay=0.002))
    async with app.run_test(size=SIZE) as pilot:
        loop = asyncio.get_running_loop()
        start = loop.time()
        await type_and_send(pilot, "Talk a lot")
        await wait_for(pilot, lambda: app.reply_view is None and len(texts(app)) == 3)
        elapsed = loop.time() - start
        assert shown_text(app.transcript.views()[-1]) == "".join(chunks).strip()
    assert writes <= elapsed * 20 + 3, (writes, elapsed)


async def test_escape_before_any_text_drops_the_empty_reply_and_keeps_the_message(store: Store) -> None:
    hold = asyncio.Event()
    app = await make_app(store, ScriptedBackend([[hold, "late"]]))
    async with app.run_test(size=SIZE) as pilot:
        await type_and_send(pilot, "Hello?")
        await wait_for(pilot, lambda: app.reply_view is not None)
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.reply_view is None and not app.turn_running)
        assert texts(app)[-1] == ("Kai", "Hello?")
        await type_and_send(pilot, "Anyone?")
        await wait_for(pilot, lambda: texts(app)[-1] == ("Mika", "…"))
    path = await store.messages.path((await store.chats.latest("mika")).head_id)
    assert [m.content for m in path[-3:]] == ["Hello?", "Anyone?", "…"]


async def test_regen_with_nothing_to_regenerate_is_a_notice_not_a_crash(store: Store) -> None:
    app = await make_app(store, ScriptedBackend([["Hi."]]))
    async with app.run_test(size=SIZE) as pilot:
        await type_and_send(pilot, "/regen")
        await wait_for(pilot, lambda: any("nothing to regenerate" in n or "greeting" in n for n in notices(app)))
        assert app.is_running
        await type_and_send(pilot, "Hello")
        await wait_for(pilot, lambda: texts(app)[-1] == ("Mika", "Hi."))


async def test_regen_adds_a_new_reply_in_place_of_the_old(store: Store) -> None:
    app = await make_app(store, ScriptedBackend([["First."], ["Second."]]))
    async with app.run_test(size=SIZE) as pilot:
        await type_and_send(pilot, "Hello")
        await wait_for(pilot, lambda: texts(app)[-1] == ("Mika", "First."))
        await type_and_send(pilot, "/regen")
        await wait_for(pilot, lambda: texts(app)[-1] == ("Mika", "Second.") and app.reply_view is None)
        assert [t for _, t in texts(app)].count("First.") == 0


async def test_the_status_bar_follows_memory_work_even_from_another_thread(store: Store) -> None:
    app = await make_app(store, ScriptedBackend())
    async with app.run_test(size=SIZE) as pilot:
        assert "memory idle" in status_text(app) and "scripted · script" in status_text(app)
        app.handle_memory_event(MemoryWorkStarted("summary"))
        await wait_for(pilot, lambda: "◐ remembering (summary)…" in status_text(app))
        thread = threading.Thread(target=app.handle_memory_event, args=(MemoryWorkFailed("summary", "timed out"),))
        thread.start()
        thread.join()
        await wait_for(pilot, lambda: "memory: failed (timed out) — will retry" in status_text(app))
        app.handle_memory_event(MemoryWorkDone("summary"))
        await wait_for(pilot, lambda: "memory idle" in status_text(app))


async def test_the_status_bar_shows_the_prompt_size_after_a_turn(store: Store) -> None:
    app = await make_app(store, ScriptedBackend([["Hi."]]))
    async with app.run_test(size=SIZE) as pilot:
        await type_and_send(pilot, "Hello")
        await wait_for(pilot, lambda: texts(app)[-1] == ("Mika", "Hi.") and app.reply_view is None)
        total = app.session.last_prompt.total_tokens
        assert f"prompt ~{total} tok" in status_text(app)


async def test_summary_shows_that_there_is_none_yet(store: Store) -> None:
    from omoide.tui.screens.text_modal import TextModal

    app = await make_app(store, ScriptedBackend())
    async with app.run_test(size=SIZE) as pilot:
        await type_and_send(pilot, "/summary")
        await pilot.pause()
        assert isinstance(app.screen, TextModal) and "No summary yet" in app.screen.markdown


async def test_every_slash_command_has_a_handler_in_the_app(store: Store) -> None:
    from omoide.tui.slash import ALIASES, COMMANDS

    app = await make_app(store, ScriptedBackend())
    missing = [name for name in [*COMMANDS, *ALIASES.values()] if name not in app.commands]
    assert not missing, f"parsed but with no TUI handler: {missing}"


async def test_help_shows_the_keys_as_currently_bound(store: Store) -> None:
    from omoide.tui.screens.help import HelpScreen

    app = await make_app(store, ScriptedBackend())
    async with app.run_test(size=SIZE) as pilot:
        app.set_keymap({"chat.diary": "ctrl+y"})
        await type_and_send(pilot, "/help")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        for key, does in [("^y", "Diary"), ("esc", "Stop reply"), ("⏎", "Send"), ("pgup", "Page up"), ("^p", "Prompt")]:
            assert (key, does) in app.screen.keys, (key, does)
        await pilot.press("escape")
        await pilot.press("ctrl+y")
        assert app.diary.has_class("visible")


async def test_send_can_be_moved_to_another_key(store: Store) -> None:
    app = await make_app(store, ScriptedBackend([["Hi."]]))
    async with app.run_test(size=SIZE) as pilot:
        app.set_keymap({"chat.send": "ctrl+j"})
        app.query_one("#input").value = "Hello"
        await pilot.press("enter")
        await pilot.pause(0.1)
        assert texts(app) == [("Mika", "*waves* Hello, Kai!")] and app.query_one("#input").value == "Hello"
        await pilot.press("ctrl+j")
        await wait_for(pilot, lambda: texts(app)[-1] == ("Mika", "Hi."))


async def test_the_chat_list_starts_renames_archives_and_reopens_chats(store: Store) -> None:
    app = await make_app(store, ScriptedBackend([["Hi."]]))
    async with app.run_test(size=SIZE) as pilot:
        await type_and_send(pilot, "Remember this chat")
        await wait_for(pilot, lambda: texts(app)[-1] == ("Mika", "Hi.") and app.reply_view is None)
        first_id = app.session.chat.id

        await pilot.press("ctrl+l")
        await pilot.pause()
        await pilot.press("n")
        await wait_for(pilot, lambda: app.session.chat.id != first_id)
        assert texts(app) == [("Mika", "*waves* Hello, Kai!")]

        await pilot.press("ctrl+l")
        await pilot.pause()
        screen = app.screen
        table = screen.query_one(DataTable)
        assert table.row_count == 2
        table.move_cursor(row=next(i for i, c in enumerate(screen.chats) if c.id == first_id))
        await pilot.press("r")
        await pilot.pause()
        app.screen.query_one("#answer").value = "The bakery"
        await pilot.press("enter")
        await wait_for(pilot, lambda: any(c.title == "The bakery" for c in screen.chats))
        assert "The bakery" in [str(table.get_row_at(i)[1]) for i in range(table.row_count)]
        await pilot.press("a")
        await wait_for(pilot, lambda: table.row_count == 1)
        await pilot.press("s")
        await wait_for(pilot, lambda: table.row_count == 2)
        table.move_cursor(row=next(i for i, c in enumerate(screen.chats) if c.id == first_id))
        await pilot.press("a")
        await wait_for(pilot, lambda: not next(c for c in screen.chats if c.id == first_id).archived)
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.session.chat.id == first_id)
        assert texts(app)[-2:] == [("Kai", "Remember this chat"), ("Mika", "Hi.")]
        assert "The bakery" in str(app.query_one("#title").render())


async def test_sending_from_the_start_of_a_long_chat_jumps_to_the_live_end(store: Store) -> None:
    app = await long_chat_app(store, 150, backend=ScriptedBackend([["Back to now."]]))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+home")
        await wait_for(pilot, lambda: texts(app)[0][1] == "*waves* Hello, Kai!")
        await type_and_send(pilot, "What now?")
        await wait_for(pilot, lambda: texts(app)[-1] == ("Mika", "Back to now.") and app.reply_view is None)
        assert [t for _, t in texts(app)[-4:]] == ["line 148", "line 149", "What now?", "Back to now."]


async def test_brackets_in_titles_errors_and_diary_lines_show_as_typed(store: Store) -> None:
    from omoide.errors import BackendUnreachable
    from omoide.tui.widgets.diary import DiaryPane

    error = BackendUnreachable("Connection refused [Errno 111] at http://x/[id]", "Check base_url [/]")
    app = await make_app(store, ScriptedBackend([error]))
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await store.chats.rename(app.session.chat.id, "[OOC] the [b]bakery[/b]")
        await app.show_chat()
        assert str(app.query_one("#title").render()).endswith("[OOC] the [b]bakery[/b]")
        await type_and_send(pilot, "Hello?")
        await wait_for(pilot, lambda: any("[Errno 111]" in n for n in notices(app)))
        await pilot.pause(0.2)
        toasts = [str(t.render()) for t in app.screen.query("Toast")]
        assert any("Connection refused [Errno 111] at http://x/[id]" in t and "[/]" in t for t in toasts), toasts
        await type_and_send(pilot, "/remember [secret] plan")
        await wait_for(pilot, lambda: "[secret] plan" in app.query_one(DiaryPane).query_one(Markdown).source)
        await pilot.press("ctrl+l")
        await pilot.pause()
        table = app.screen.query_one(DataTable)
        assert str(table.get_row_at(0)[1]) == "[OOC] the [b]bakery[/b]"


async def test_a_stream_that_breaks_midway_keeps_the_partial_reply_marked_interrupted(store: Store) -> None:
    from omoide.errors import BackendUnreachable
    from omoide.domain.chat import MessageStatus

    broken = BackendUnreachable("The server closed the connection mid-reply.", "Try /regen.")
    app = await make_app(store, ScriptedBackend([["She opened ", "the door", broken]]))
    async with app.run_test(size=SIZE) as pilot:
        await type_and_send(pilot, "Knock knock")
        await wait_for(pilot, lambda: any("closed the connection" in n for n in notices(app)) and app.reply_view is None)
        view = app.transcript.views()[-1]
        assert shown_text(view) == "She opened the door" and view.meta.endswith("(interrupted)")
        assert texts(app)[-2] == ("Kai", "Knock knock")
        assert app.query_one("#input").value == "" and app.query_one("#input").has_focus
    reply = (await store.messages.path((await store.chats.latest("mika")).head_id))[-1]
    assert reply.status is MessageStatus.INTERRUPTED and reply.content == "She opened the door"


async def test_the_inspector_reports_what_the_second_turn_shares_with_the_first(store: Store) -> None:
    app = await make_app(store, ScriptedBackend([["One."], ["Two."]]))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+p")
        await wait_for(pilot, lambda: bool(app.screen.query("#inspector-summary")))
        assert "No prompt yet" in str(app.screen.query_one("#inspector-summary").render())
        await pilot.press("escape")
        await wait_for(pilot, lambda: not app.screen.query("#inspector-summary"))
        for text, reply in [("First", "One."), ("Second", "Two.")]:
            await type_and_send(pilot, text)
            await wait_for(pilot, lambda reply=reply: texts(app)[-1] == ("Mika", reply) and app.reply_view is None)
        await type_and_send(pilot, "/prompt")
        await wait_for(pilot, lambda: bool(app.screen.query("#inspector-summary")))
        summary = str(app.screen.query_one("#inspector-summary").render())
        assert "Shared with the previous turn's prompt: about" in summary and "reusable from a prompt cache" in summary
        assert "(estimated from the text's length" in summary and "Dropped to fit: nothing" in summary


async def test_paging_up_to_the_top_loads_older_messages_and_keeps_the_place(store: Store) -> None:
    from omoide.tui.widgets.transcript import MAX_MOUNTED

    app = await long_chat_app(store, 120)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.transcript.whole)  # the page's rest is mounted after the first paint
        first_shown = texts(app)[0][1]
        assert app.query_one("#input").has_focus
        for _ in range(40):
            await pilot.press("pageup")
            if texts(app)[0][1] != first_shown:
                break
        await wait_for(pilot, lambda: texts(app)[0][1] != first_shown)
        assert len(app.transcript.views()) <= MAX_MOUNTED
        await pilot.pause(0.1)
        # The message that was at the top is still in view, not thrown to the far end.
        old_top = next(v for v in app.transcript.views() if v.text == first_shown)
        assert app.transcript.scroll_y > 0
        assert old_top.region.y - app.transcript.region.y < app.transcript.region.height
        await pilot.press("ctrl+end")
        await wait_for(pilot, lambda: texts(app)[-1][1] == "line 119")


async def test_a_streaming_reply_stays_in_view_unless_you_scrolled_up_to_read(store: Store) -> None:
    settings = Settings(user_name="Kai")
    hold = asyncio.Event()
    long_reply = [f"Line {i} of a long answer.\n\n" for i in range(30)]
    backend = ScriptedBackend([long_reply, ["First part of the answer, slowly.\n\n", hold, *long_reply]], delay=0.005)
    # Its own summarizer: 60 messages start compression, which must not eat the chat's script.
    session = await ChatSession.open(store, MIKA, settings, backend, summarizer=ScriptedBackend())
    head = session.chat.head_id
    for i in range(60):
        head = (await store.messages.add(session.chat.id, head, Role.USER if i % 2 == 0 else Role.ASSISTANT, f"line {i}")).id
    app = OmoideApp(session)
    async with app.run_test(size=SIZE) as pilot:
        transcript = app.transcript
        await type_and_send(pilot, "Tell me everything")
        await wait_for(pilot, lambda: app.reply_view is None and texts(app)[-1][1].startswith("Line 0"))
        await pilot.pause(0.1)
        assert transcript.scroll_y == transcript.max_scroll_y > 0

        await type_and_send(pilot, "And again")
        await wait_for(pilot, lambda: app.reply_view is not None and "First part" in shown_text(app.reply_view))
        await pilot.press("pageup")
        await pilot.pause(0.1)
        reading_at = transcript.scroll_y
        hold.set()
        await wait_for(pilot, lambda: app.reply_view is None)
        await pilot.pause(0.1)
        assert transcript.scroll_y == reading_at < transcript.max_scroll_y
        await pilot.press("ctrl+end")
        await pilot.pause(0.1)
        assert transcript.scroll_y == transcript.max_scroll_y


def test_the_memory_label_reads_the_sessions_status() -> None:
    from omoide.tui.widgets.status import memory_label

    assert memory_label("") == "memory idle"
    assert memory_label("remembering…") == "◐ remembering…"
    assert memory_label("memory failed (timed out); will retry") == "memory: failed (timed out) — will retry"


async def test_reading_forward_from_the_start_loads_the_next_page_without_jumping(store: Store) -> None:
    from omoide.tui.widgets.transcript import PAGE

    app = await long_chat_app(store, 150)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+home")
        await wait_for(pilot, lambda: texts(app)[0][1] == "*waves* Hello, Kai!")
        last_of_first_page = f"line {PAGE - 2}"
        # The rest of the page mounts after the first paint: wait for it (bounded) before reading on.
        await wait_for(pilot, lambda: texts(app)[-1][1] == last_of_first_page)
        for _ in range(40):
            await pilot.press("pagedown")
            await pilot.pause()  # the scroll, and the page load it may start, are processed before the next key
            if texts(app)[-1][1] != last_of_first_page:
                break
        await wait_for(pilot, lambda: texts(app)[-1][1] == f"line {2 * PAGE - 2}")
        await pilot.pause(0.2)
        transcript = app.transcript
        read = next(v for v in transcript.views() if v.text == last_of_first_page)
        assert transcript.region.y <= read.region.y < transcript.region.bottom
        assert transcript.scroll_y < transcript.max_scroll_y


async def test_at_80_columns_notices_stay_few_and_a_repeat_is_counted_not_stacked(store: Store) -> None:
    """Issue 42: at 80 columns notices were 40 columns wide, padded, and stacked
    without end, covering half the chat."""
    from textual.widgets._toast import Toast

    from tests.tui.test_app import make_app, notices, type_and_send, wait_for

    app = await make_app(store, ScriptedBackend())
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        for _ in range(5):
            await type_and_send(pilot, "/nonsense")
            app.query_one("#input").value = ""
        await wait_for(pilot, lambda: any(n.endswith("(×5)") for n in notices(app)))
        await type_and_send(pilot, "/unpin 999")
        await type_and_send(pilot, "/goto 1999-01-01")
        await wait_for(pilot, lambda: len(notices(app)) == 2 and not any("(×5)" in n for n in notices(app)))
        await wait_for(pilot, lambda: len(app.screen.query(Toast)) == 2 and all(t.outer_size.height for t in app.screen.query(Toast)))
        toasts = list(app.screen.query(Toast))
        assert sum(t.outer_size.height for t in toasts) <= 8  # of the chat's 24 rows
        assert all(t.outer_size.width > 40 for t in toasts)  # a sentence on two rows, not five


async def test_a_memory_warning_is_titled_memory_not_template(store: Store) -> None:
    """Issue 42: a summary's warning ("kept the sentences with names ... instead") was titled "Template"."""
    from omoide.memory.events import MemoryNotice
    from tests.tui.test_app import make_app, wait_for

    app = await make_app(store, ScriptedBackend())
    async with app.run_test(size=(80, 24)) as pilot:
        app.handle_memory_event(MemoryNotice("summary: the reply echoed its instructions; kept the sentences with names, numbers and dates instead"))
        await wait_for(pilot, lambda: bool(list(app._notifications)))
        [notice] = list(app._notifications)
        assert notice.title == "Memory" and notice.severity == "warning"


async def test_summary_says_how_far_it_covers_by_place_on_the_path_not_database_number(store: Store) -> None:
    """Issue 42: "up to message #41" in a chat of 30 messages: a database id read as a place."""
    from omoide.tui.app import OmoideApp
    from omoide.tui.screens.text_modal import TextModal
    from tests.tui.test_app import MIKA, wait_for

    other = await ChatSession.open(store, MIKA, Settings(user_name="Kai"), ScriptedBackend(default=lambda m: ["ok"]))
    for i in range(10):  # another chat first: this chat's ids start past 20
        [_ async for _ in other.send(f"elsewhere {i}")]
    await other.aclose()
    settings = Settings(user_name="Kai", recent_messages=3, summary_threshold=4)
    summary = "Kai and Mika talked about the bakery. She promised to save him a melon pan."
    session = await ChatSession.open(store, MIKA, settings, ScriptedBackend(default=lambda m: ["ok"]),
                                     summarizer=ScriptedBackend([[summary]]), new=True)
    for i in range(2):
        [_ async for _ in session.send(f"message {i}")]
    await session.wait_for_memory_work()
    memory = await session.memory()
    assert memory.summary is not None and memory.summary.covers_to_id is not None and memory.summary.covers_to_id > 20
    app = OmoideApp(session)
    async with app.run_test(size=(100, 30)) as pilot:
        await type_and_send(pilot, "/summary")
        await wait_for(pilot, lambda: isinstance(app.screen, TextModal))
        shown = app.screen.markdown  # type: ignore[attr-defined]
        assert "Covers the story up to its 2nd message of the 5 on this path." in shown
        assert f"#{memory.summary.covers_to_id}" not in shown
