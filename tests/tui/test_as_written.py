"""What was written is shown as written: Markdown styles a message but never
removes a character of it (line breaks, backslashes, angle brackets, entities)."""

from __future__ import annotations

from textual.widgets._markdown import MarkdownBlock

from omoide.store import Store
from omoide.tui.widgets.message import MessageView
from tests.scripted import ScriptedBackend
from tests.tui.test_app import SIZE, make_app, texts, type_and_send, wait_for


def screen_lines(view: MessageView) -> list[str]:
    """The message's text as drawn: each line of each Markdown block, right-trimmed."""
    lines: list[str] = []
    for block in view.query(MarkdownBlock):
        if block.children:  # a list or quote: its lines are drawn by the blocks inside
            continue
        for y in range(block.size.height):
            text = "".join(seg.text for seg in block.render_line(y)).rstrip()
            if text:
                lines.append(text.strip())
    return lines


def italic_words(view: MessageView) -> list[str]:
    return [seg.text for block in view.query(MarkdownBlock) for y in range(block.size.height)
            for seg in block.render_line(y) if seg.style and seg.style.italic and seg.text.strip()]


async def test_a_message_typed_with_ctrl_j_shows_its_three_lines(store: Store) -> None:
    app = await make_app(store, ScriptedBackend([["Roses are red,\nviolets are blue,\nsugar is sweet."]]))
    async with app.run_test(size=SIZE) as pilot:
        app.query_one("#input").focus()
        for i, line in enumerate(["first line", "second line", "third line"]):
            if i:
                await pilot.press("ctrl+j")
            await pilot.press(*line)
        await pilot.press("enter")
        await wait_for(pilot, lambda: len(texts(app)) == 3 and app.reply_view is None)
        await pilot.pause()
        user, reply = app.transcript.views()[-2:]
        assert user.text == "first line\nsecond line\nthird line"
        assert screen_lines(user) == ["first line", "second line", "third line"]
        assert screen_lines(reply) == ["Roses are red,", "violets are blue,", "sugar is sweet."]


async def test_backslashes_angle_brackets_and_entities_are_never_eaten(store: Store) -> None:
    reply = "Thunder\\; ok. <grins> <<U>> &amp; <http://x.org> C:\\temp\\new"
    app = await make_app(store, ScriptedBackend([[reply]]))
    async with app.run_test(size=SIZE) as pilot:
        await type_and_send(pilot, "a\\b <c> *d*")
        await wait_for(pilot, lambda: len(texts(app)) == 3 and app.reply_view is None)
        await pilot.pause()
        user, answer = app.transcript.views()[-2:]
        assert screen_lines(user) == ["a\\b <c> d"]
        assert italic_words(user) == ["d"]  # emphasis still styles: only its markers go
        assert screen_lines(answer) == [reply]


async def test_a_line_that_looks_like_a_link_definition_is_kept(store: Store) -> None:
    app = await make_app(store, ScriptedBackend([["[OOC]: brb\n\nShe waits."]]))
    async with app.run_test(size=SIZE) as pilot:
        await type_and_send(pilot, "brb")
        await wait_for(pilot, lambda: len(texts(app)) == 3 and app.reply_view is None)
        await pilot.pause()
        assert screen_lines(app.transcript.views()[-1]) == ["[OOC]: brb", "She waits."]


async def test_a_streamed_reply_keeps_its_line_breaks_while_it_streams(store: Store) -> None:
    import asyncio

    hold = asyncio.Event()
    app = await make_app(store, ScriptedBackend([["Dear Kai,\n", "I miss you.\n", hold, "Yours, Mika"]]))
    async with app.run_test(size=SIZE) as pilot:
        await type_and_send(pilot, "A letter?")
        await wait_for(pilot, lambda: app.reply_view is not None and "I miss you." in app.reply_view.text)
        view = app.reply_view
        await wait_for(pilot, lambda: screen_lines(view) == ["Dear Kai,", "I miss you."])
        hold.set()
        await wait_for(pilot, lambda: app.reply_view is None)
        await pilot.pause()
        assert screen_lines(app.transcript.views()[-1]) == ["Dear Kai,", "I miss you.", "Yours, Mika"]


async def test_a_long_code_line_wraps_instead_of_being_cut_at_the_edge(store: Store) -> None:
    line = "print(" + ", ".join(f"'item number {i}'" for i in range(20)) + ")  # THE-END"
    app = await make_app(store, ScriptedBackend([[f"Here:\n\n```python\n{line}\n```\n"]]))
    async with app.run_test(size=(80, 30)) as pilot:
        await type_and_send(pilot, "code?")
        await wait_for(pilot, lambda: len(texts(app)) == 3 and app.reply_view is None)
        await pilot.pause()
        screen = "\n".join(strip.text for strip in app.screen._compositor.render_strips())
        assert len(line) > 80 and "# THE-END" in screen
        shown = "".join(part.strip(" █▌▐") for part in screen.splitlines() if "item number" in part or "THE-END" in part)
        assert shown.replace(" ", "") == line.replace(" ", "")  # every character, over several lines
