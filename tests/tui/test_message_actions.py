"""Actions on any message in the real TUI (Pilot, a real SQLite file, a scripted
model): Ctrl+Up selects the newest message, ↑/↓ move, and e/d/r/c/b act on it."""

from __future__ import annotations

from textual.widgets import Input, TextArea
from omoide.tui.widgets.composer import Composer

from omoide.characters.model import Character
from omoide.chat.session import ChatSession
from omoide.config.settings import Settings
from omoide.store import Store
from omoide.tui.app import OmoideApp
from omoide.tui.message_actions import MessageEditor
from omoide.tui.screens.prompt_input import InputModal
from omoide.tui.widgets.message import MessageView
from tests.scripted import ScriptedBackend
from tests.tui.test_app import notices, texts, wait_for

MIKA = Character(id="mika", name="Mika", first_message="*waves* Hello, {{user}}!")
SIZE = (110, 36)
STORY = [("Mika", "*waves* Hello, Kai!"), ("Kai", "one"), ("Mika", "A"), ("Kai", "two"), ("Mika", "B")]


async def story_app(store: Store, replies: list[list[str]] | None = None, keymap: dict[str, str] | None = None) -> OmoideApp:
    """A chat of the greeting and two exchanges ('one' -> 'A', 'two' -> 'B'); `replies` come next."""
    settings = Settings(user_name="Kai", keymap=keymap or {})
    session = await ChatSession.open(store, MIKA, settings, ScriptedBackend([["A"], ["B"], *(replies or [])]))
    for text in ("one", "two"):
        [e async for e in session.send(text)]
    return OmoideApp(session)


def focused_text(app: OmoideApp) -> str | None:
    return app.focused.text if isinstance(app.focused, MessageView) else None


async def select(pilot, ups: int) -> None:  # type: ignore[no-untyped-def]
    """Enter message selection and move `ups` messages up from the newest."""
    await pilot.press("ctrl+up")
    for _ in range(ups):
        await pilot.press("up")
    await pilot.pause()


async def path_contents(app: OmoideApp) -> list[str]:
    return [m.content for m in await app.session.transcript()]


async def test_ctrl_up_selects_the_newest_message_arrows_move_and_escape_returns(store: Store) -> None:
    app = await story_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+up")
        assert focused_text(app) == "B"
        await pilot.press("up", "k")
        assert focused_text(app) == "A"
        await pilot.press("j")
        assert focused_text(app) == "two"
        await pilot.press("escape")
        assert app.focused is app.query_one("#input", Composer)
        await pilot.press("x")  # typing goes to the composer again, not to the messages
        assert app.query_one("#input", Composer).value == "x"


async def test_c_copies_the_focused_message(store: Store) -> None:
    app = await story_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await select(pilot, 2)
        await pilot.press("c")
        assert app.clipboard == "A"
        assert any("Copied Mika's message" in n for n in notices(app))


async def test_e_edits_an_earlier_reply_into_a_new_path_and_keeps_the_old(store: Store) -> None:
    app = await story_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await select(pilot, 2)
        await pilot.press("e")
        await wait_for(pilot, lambda: isinstance(app.screen, MessageEditor))
        area = app.screen.query_one(TextArea)
        assert area.text == "A"
        area.text = "A, softly"
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: texts(app) == [*STORY[:2], ("Mika", "A, softly")])
        assert any("kept on the branch 'auto-" in n for n in notices(app))
    assert await path_contents(app) == ["*waves* Hello, Kai!", "one", "A, softly"]
    old = [m for m in await store.messages.children((await app.session.transcript())[1].id)]
    assert [m.content for m in old] == ["A", "A, softly"]


async def test_e_on_your_message_answers_the_new_version(store: Store) -> None:
    app = await story_app(store, [["A for uno"]])
    async with app.run_test(size=SIZE) as pilot:
        await select(pilot, 3)
        await pilot.press("e")
        await wait_for(pilot, lambda: isinstance(app.screen, MessageEditor))
        app.screen.query_one(TextArea).text = "uno"
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: texts(app) == [STORY[0], ("Kai", "uno"), ("Mika", "A for uno")] and app.reply_view is None)
    assert await path_contents(app) == ["*waves* Hello, Kai!", "uno", "A for uno"]


async def test_d_deletes_from_the_path_and_the_rest_stays_on_a_branch(store: Store) -> None:
    app = await story_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await select(pilot, 1)
        await pilot.press("d")
        await wait_for(pilot, lambda: texts(app) == STORY[:3])
        # Issue 42: the notice says how to get it back, and counts places as you do (not database ids).
        notice = next(n for n in notices(app) if "off this path" in n)
        assert "the chat goes on from its 3rd message" in notice
        name = notice.split("/branch restore ")[1].split()[0]
        assert "Nothing is lost: /branch restore " + name + " brings it back, with what came after it." in notice
        assert app.focused is app.query_one("#input", Composer)
    branches = {b.name: b.message_id for b in await app.session.tree.branches()}
    assert (await store.messages.get(branches[name])).content == "B"  # nothing left the tree


async def test_r_regenerates_an_earlier_reply_as_a_new_swipe(store: Store) -> None:
    app = await story_app(store, [["A2"]])
    async with app.run_test(size=SIZE) as pilot:
        await select(pilot, 2)
        await pilot.press("r")
        await wait_for(pilot, lambda: texts(app) == [*STORY[:2], ("Mika", "A2")] and app.reply_view is None)
    swipes, index = await app.session.tree.swipes()
    assert [m.content for m in swipes] == ["A", "A2"] and index == 1


async def test_b_starts_a_named_branch_at_the_message(store: Store) -> None:
    app = await story_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await select(pilot, 2)
        await pilot.press("b")
        await wait_for(pilot, lambda: isinstance(app.screen, InputModal))
        app.screen.query_one(Input).value = "gentler"
        await pilot.press("enter")
        await wait_for(pilot, lambda: texts(app) == STORY[:3])
        assert any("The branch 'gentler' starts at message" in n for n in notices(app))
    branches = {b.name: b.message_id for b in await app.session.tree.branches()}
    assert (await store.messages.get(branches["gentler"])).content == "A"
    assert app.session.chat.head_id == branches["gentler"]


async def test_the_message_keys_are_in_help_and_follow_the_keymap(store: Store) -> None:
    app = await story_app(store, keymap={"message.delete": "x", "chat.select": "f6"})
    async with app.run_test(size=SIZE) as pilot:
        rows = dict((what, keys) for keys, what in app.key_help())
        assert rows["Selected message: delete it and what follows (kept on a branch)"] == "x"
        assert rows["Select a message (then e, x, r, c, b act on it)"] == "F6" and "e" in rows["Selected message: edit it (a new version; the old one is kept)"]
        await pilot.press("f6")
        await pilot.pause()
        assert focused_text(app) == "B"
        await pilot.press("d")  # no longer the delete key
        assert texts(app) == STORY
        await pilot.press("x")
        await wait_for(pilot, lambda: texts(app) == STORY[:4])


async def test_esc_in_the_editor_changes_nothing_and_the_message_stays_selected(store: Store) -> None:
    app = await story_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await select(pilot, 2)
        await pilot.press("e")
        await wait_for(pilot, lambda: isinstance(app.screen, MessageEditor))
        app.screen.query_one(TextArea).text = "never kept"
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, MessageEditor))
        assert focused_text(app) == "A" and texts(app) == STORY
    assert await path_contents(app) == [text for _, text in STORY]
    assert await app.session.tree.branches() == []


async def test_an_action_while_a_reply_streams_is_refused_with_a_notice(store: Store) -> None:
    import asyncio

    hold = asyncio.Event()
    app = await story_app(store, [["Once upon a time, ", "a baker ", hold, "slept."]])
    async with app.run_test(size=SIZE) as pilot:
        app.query_one("#input", Composer).value = "three"
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.reply_view is not None and app.reply_view.text.startswith("Once"))
        await select(pilot, 3)
        await pilot.press("d")
        await wait_for(pilot, lambda: any("A reply is still coming" in n for n in notices(app)))
        hold.set()
        await wait_for(pilot, lambda: app.reply_view is None)
    assert await path_contents(app) == [*(text for _, text in STORY), "three", "Once upon a time, a baker slept."]
