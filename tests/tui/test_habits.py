"""The habits of terminal chat apps, in the real TUI (Pilot) on a real SQLite
file: /copy, the mouse toggle, the command palette, Up for your earlier
messages, and themes remembered in config.toml."""

from __future__ import annotations

import tomllib
from pathlib import Path

from textual.command import CommandPalette

from omoide import locations
from omoide.config.settings import load_settings
from omoide.chat.session import ChatSession
from omoide.store import Store
from omoide.tui.app import OmoideApp
from omoide.tui.widgets.composer import Composer
from omoide.tui.widgets.status import StatusBar
from tests.scripted import ScriptedBackend
from tests.tui.test_app import MIKA, make_app, notices, texts, type_and_send, wait_for

SIZE = (80, 24)
REPLY = "Here it is:\n```python\nprint('hi')\nprint('there')\n```\nEnjoy."


async def test_copy_puts_the_last_reply_on_the_clipboard_and_says_what(store: Store) -> None:
    app = await make_app(store, ScriptedBackend([[REPLY]]))
    async with app.run_test(size=SIZE) as pilot:
        await type_and_send(pilot, "Show me code")
        await wait_for(pilot, lambda: len(texts(app)) == 3 and app.reply_view is None)
        await type_and_send(pilot, "/copy")
        await wait_for(pilot, lambda: app.clipboard == REPLY)
        assert "Copied the last reply (59 characters, 6 lines)." in notices(app)
        await type_and_send(pilot, "/copy code")
        await wait_for(pilot, lambda: app.clipboard == "print('hi')\nprint('there')")
        assert "Copied the last code block (26 characters, 2 lines)." in notices(app)


async def test_copy_with_nothing_to_copy_says_so(store: Store) -> None:
    app = await make_app(store, ScriptedBackend([["No code here."]]))
    async with app.run_test(size=SIZE) as pilot:
        await type_and_send(pilot, "Hi")
        await wait_for(pilot, lambda: len(texts(app)) == 3 and app.reply_view is None)
        await type_and_send(pilot, "/copy code")
        await wait_for(pilot, lambda: any("no code block" in n for n in notices(app)))
        assert app.clipboard == ""
        await type_and_send(pilot, "/copy everything")
        await wait_for(pilot, lambda: any("/copy does not know 'everything'" in n for n in notices(app)))


async def test_f2_turns_the_mouse_off_and_the_status_line_says_so(store: Store) -> None:
    app = await make_app(store, ScriptedBackend())
    async with app.run_test(size=SIZE) as pilot:
        status = app.query_one(StatusBar)
        assert "mouse off" not in str(status.render())
        await pilot.press("f2")
        await wait_for(pilot, lambda: str(status.render()).startswith("mouse off: select with the terminal · F2 turns it on"))
        await pilot.press("f2")
        await wait_for(pilot, lambda: "mouse off" not in str(status.render()))
        assert app.mouse_on


async def test_up_and_down_walk_your_earlier_messages(store: Store) -> None:
    app = await make_app(store, ScriptedBackend([["One."], ["Two."], ["Three."]]))
    async with app.run_test(size=SIZE) as pilot:
        for text in ["first", "second", "third"]:
            await type_and_send(pilot, text)
            await wait_for(pilot, lambda: app.reply_view is None and not app.turn_running and texts(app)[-2][1] == text)
        composer = app.query_one(Composer)
        seen = []
        for _ in range(4):  # past the oldest it stays there
            await pilot.press("up")
            seen.append(composer.value)
        assert seen == ["third", "second", "first", "first"]
        await pilot.press("down")
        assert composer.value == "second"
        await pilot.press("down", "down")
        assert composer.value == ""
        await pilot.press("up")
        assert composer.value == "third"
        await pilot.press("x")  # changed: the line is yours, Up leaves it alone
        await pilot.press("up")
        assert composer.value == "thirdx"


async def open_palette_and_pick(pilot, query: str, wanted: str) -> None:  # type: ignore[no-untyped-def]
    app = pilot.app
    await pilot.press("f1")
    await wait_for(pilot, lambda: isinstance(app.screen, CommandPalette))
    await pilot.press(*query)
    palette = app.screen
    await wait_for(pilot, lambda: any(wanted in str(o.prompt) for o in palette.query_one("CommandList").options))
    options = palette.query_one("CommandList")
    index = next(i for i, o in enumerate(options.options) if wanted in str(o.prompt))
    options.highlighted = index
    await pilot.press("enter")
    await wait_for(pilot, lambda: not isinstance(app.screen, CommandPalette))


async def test_the_palette_runs_a_slash_command_and_a_key_action_by_fuzzy_name(store: Store) -> None:
    app = await make_app(store, ScriptedBackend())
    async with app.run_test(size=SIZE) as pilot:
        await open_palette_and_pick(pilot, "diar", "/diary")
        await wait_for(pilot, lambda: app.diary.has_class("visible"))
        await open_palette_and_pick(pilot, "renam", "/rename")  # needs words: put in the composer to finish
        assert app.query_one(Composer).value == "/rename "
        await open_palette_and_pick(pilot, "mouse", "Mouse off/on")  # a key's action, by its name
        await wait_for(pilot, lambda: not app.mouse_on)


async def test_the_palette_switches_to_a_character(store: Store) -> None:
    app = await make_app(store, ScriptedBackend())
    async with app.run_test(size=SIZE) as pilot:
        await open_palette_and_pick(pilot, "suzu", "Character: Suzune")
        await wait_for(pilot, lambda: app.session.character.id == "suzune")


async def test_the_palette_opens_another_chat_and_restores_a_branch(store: Store) -> None:
    app = await make_app(store, ScriptedBackend([["Reply one."], ["Reply two."]]))
    async with app.run_test(size=SIZE) as pilot:
        first = app.session.chat.id
        await app.session.navigator.rename(first, "The first evening")
        await type_and_send(pilot, "Before the fork")
        await wait_for(pilot, lambda: app.reply_view is None and not app.turn_running and len(texts(app)) == 3)
        await type_and_send(pilot, "/branch save fork-point")
        await wait_for(pilot, lambda: any("Saved branch 'fork-point'" in n for n in notices(app)))
        await type_and_send(pilot, "After the fork")
        await wait_for(pilot, lambda: app.reply_view is None and not app.turn_running and len(texts(app)) == 5)
        await open_palette_and_pick(pilot, "fork", "Branch: fork-point")
        await wait_for(pilot, lambda: len(texts(app)) == 3 and texts(app)[-1][1] == "Reply one.")
        await type_and_send(pilot, "/new")
        await wait_for(pilot, lambda: app.session.chat.id != first)
        await open_palette_and_pick(pilot, "first eve", "Chat: The first evening")
        await wait_for(pilot, lambda: app.session.chat.id == first)


async def test_a_theme_is_used_and_remembered_across_restarts(store: Store) -> None:
    app = await make_app(store, ScriptedBackend())
    async with app.run_test(size=SIZE) as pilot:
        await type_and_send(pilot, "/theme nord")
        await wait_for(pilot, lambda: app.theme == "nord")
        await open_palette_and_pick(pilot, "gruv", "Theme: gruvbox")
        await wait_for(pilot, lambda: app.theme == "gruvbox")
    saved = tomllib.loads(locations.config_file().read_text(encoding="utf-8"))
    assert saved["ui"]["theme"] == "gruvbox"
    assert locations.config_file().stat().st_mode & 0o777 == 0o600
    session = await ChatSession.open(store, MIKA, load_settings(), ScriptedBackend())
    again = OmoideApp(session)
    async with again.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert again.theme == "gruvbox"


async def test_an_unknown_theme_says_which_there_are(store: Store) -> None:
    app = await make_app(store, ScriptedBackend())
    async with app.run_test(size=SIZE) as pilot:
        await type_and_send(pilot, "/theme neon-pink")
        await wait_for(pilot, lambda: any("There is no theme named 'neon-pink'. Themes: " in n and "nord" in n for n in notices(app)))
        assert not locations.config_file().exists()


async def test_a_newline_key_writes_a_multi_line_message_and_the_box_grows(store: Store) -> None:
    app = await make_app(store, ScriptedBackend([["Noted."]]))
    async with app.run_test(size=SIZE) as pilot:
        composer = app.query_one(Composer)
        assert composer.size.height == 1
        await pilot.press(*"Dear Mika,", "ctrl+j", *"the rain", "alt+enter", *"has stopped.")
        assert composer.value == "Dear Mika,\nthe rain\nhas stopped."
        await wait_for(pilot, lambda: composer.size.height == 3)
        for _ in range(6):
            await pilot.press("ctrl+j", "x")
        await wait_for(pilot, lambda: composer.size.height == 6)  # a few lines, then it scrolls
        assert composer.max_scroll_y > 0
        composer.value = "Line one\nline two"
        await pilot.press("enter")
        await wait_for(pilot, lambda: len(texts(app)) == 3 and app.reply_view is None)
        assert texts(app)[1] == ("Kai", "Line one\nline two")
        assert composer.value == "" and composer.size.height == 1


async def test_the_new_keys_move_with_the_keymap_and_help_says_where(store: Store) -> None:
    from omoide.config.settings import Settings
    from omoide.tui.screens.help import HelpScreen

    settings = Settings(user_name="Kai", keymap={"chat.palette": "f5", "chat.mouse": "f6", "chat.newline": "ctrl+n"})
    app = OmoideApp(await ChatSession.open(store, MIKA, settings, ScriptedBackend()))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f5")
        await wait_for(pilot, lambda: isinstance(app.screen, CommandPalette))
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, CommandPalette))
        await pilot.press("f6")
        await wait_for(pilot, lambda: "F6 turns it on" in str(app.query_one(StatusBar).render()))
        await pilot.press("a", "ctrl+n", "b")
        assert app.query_one(Composer).value == "a\nb"
        assert "F5: palette" in str(app.query_one(Composer).placeholder)
        app.query_one(Composer).value = "/help"
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
        keys = dict(app.key_help())
        assert keys["F5"] == "Command palette" and keys["F6"].startswith("Mouse off/on") and keys["^n"] == "New line in your message"


async def test_a_pasted_text_keeps_its_lines(store: Store) -> None:
    from textual import events

    app = await make_app(store, ScriptedBackend([["Got it."]]))
    async with app.run_test(size=SIZE) as pilot:
        composer = app.query_one(Composer)
        app.post_message(events.Paste("Shopping:\n- milk\n- matcha"))  # as the terminal driver sends it
        await wait_for(pilot, lambda: composer.value == "Shopping:\n- milk\n- matcha")
        await pilot.press("enter")
        await wait_for(pilot, lambda: len(texts(app)) == 3 and app.reply_view is None)
        assert texts(app)[1] == ("Kai", "Shopping:\n- milk\n- matcha")


async def test_the_palette_shows_a_hostile_chat_title_as_typed(store: Store) -> None:
    app = await make_app(store, ScriptedBackend())
    async with app.run_test(size=SIZE) as pilot:
        await app.session.navigator.rename(app.session.chat.id, "[b]Evil[/] \x1b]52;c;cHduZWQ=\x07 night")
        await pilot.press("f1")
        await wait_for(pilot, lambda: isinstance(app.screen, CommandPalette))
        await pilot.press(*"evil")
        palette = app.screen
        await wait_for(pilot, lambda: any("Chat: [b]Evil[/] ␛]52;c;cHduZWQ=␇ night" in str(o.prompt)
                                          for o in palette.query_one("CommandList").options))
        assert "\x1b]52" not in app.export_screenshot()
