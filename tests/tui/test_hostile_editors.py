"""Hostile input, fourth round (issue 43), through Pilot on a real SQLite file:
every editor and every copy holds the text inert (a reply, a card's greeting,
a memo, an imported chat's message carrying OSC 0, OSC 52, CSI, C1 and the
end of a bracketed paste); an edit on a full disk stays in the editor; a keymap
naming no key, or holding an escape sequence, is said at the start and never
reaches the screen; bidi overrides in a name are shown, not obeyed."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import TextArea

from omoide.characters.model import Character
from omoide.chat.session import ChatSession
from omoide.config.settings import Settings
from omoide.domain.chat import Role
from omoide.store import Store
from omoide.tui.app import OmoideApp
from omoide.tui.message_actions import MessageEditor
from omoide.tui.screens.help import HelpScreen
from omoide.tui.screens.memos import MemoBookScreen, MemoEditor
from omoide.tui.widgets.composer import Composer
from omoide.tui.widgets.message import MessageView
from tests.scripted import ScriptedBackend
from tests.tui.test_app import notices, type_and_send, wait_for

PAYLOAD = "\x1b]0;PWNED\x07 \x1b]52;c;cHduZWQ=\x07 \x1b[31mred\x1b[0m \x9b32m \x1b[201~echo RAN"
SIZE = (120, 40)
HOST = Character(id="mika", name="Mika", first_message=f"*waves* {PAYLOAD}")


def clean(text: str) -> bool:
    """No character below 0x20 but newline and tab, no DEL, no C1."""
    return not any((ord(c) < 0x20 and c not in "\n\t") or 0x7F <= ord(c) <= 0x9F for c in text)


def shot_is_inert(app: OmoideApp) -> None:
    shot = app.export_screenshot()
    assert "\x1b" not in shot and "\x07" not in shot and "\x9b" not in shot


async def hostile_chat(store: Store, **settings: object) -> OmoideApp:
    """The greeting, an imported message of yours and a reply, each with the payload, and a memo with it."""
    session = await ChatSession.open(store, HOST, Settings(user_name="Kai", memory_style="memos", **settings),  # type: ignore[arg-type]
                                     ScriptedBackend(default=lambda m: ["*nods*"]))
    chat = session.chat
    mine = await store.messages.add(chat.id, chat.head_id, Role.USER, f"Imported line {PAYLOAD}")
    await store.messages.add(chat.id, mine.id, Role.ASSISTANT, f"Reply {PAYLOAD}")
    await session.refresh()
    await session.book.write(f"A memo {PAYLOAD}")
    return OmoideApp(session)


async def select(pilot, ups: int) -> None:  # type: ignore[no-untyped-def]
    await pilot.press("ctrl+up")
    for _ in range(ups):
        await pilot.press("up")
    await pilot.pause()


async def test_every_editor_holds_the_text_inert_and_an_unchanged_save_changes_nothing(store: Store) -> None:
    app = await hostile_chat(store)
    async with app.run_test(size=SIZE) as pilot:
        head = app.session.chat.head_id
        for ups in (0, 2):  # the reply, then the card's greeting
            await select(pilot, ups)
            await pilot.press("e")
            await wait_for(pilot, lambda: isinstance(app.screen, MessageEditor))
            text = app.screen.query_one(TextArea).text
            assert clean(text) and "␛]0;PWNED␇" in text and "␛[201~echo RAN" in text
            shot_is_inert(app)
            await pilot.press("ctrl+s")  # unchanged: no new version
            await wait_for(pilot, lambda: not isinstance(app.screen, MessageEditor))
            await pilot.press("escape")
        assert (await app.session.refresh()).head_id == head
        # A memo (/memos, e)
        await type_and_send(pilot, "/memos")
        await wait_for(pilot, lambda: isinstance(app.screen, MemoBookScreen) and app.screen.memos != [])
        await pilot.press("e")
        await wait_for(pilot, lambda: isinstance(app.screen, MemoEditor))
        assert clean(app.screen.query_one(TextArea).text) and "␛]52;c;" in app.screen.query_one(TextArea).text
        shot_is_inert(app)
        await pilot.press("escape", "escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, (MemoEditor, MemoBookScreen)))
        # Up in the empty composer: the imported message of yours
        app.query_one(Composer).focus()
        await pilot.press("up")
        await wait_for(pilot, lambda: app.query_one(Composer).value.startswith("Imported line"))
        assert clean(app.query_one(Composer).value)
        shot_is_inert(app)
        # A paste into the composer is made inert too.
        app.query_one(Composer).value = ""
        app.query_one(Composer).insert(f"pasted {PAYLOAD}")
        assert clean(app.query_one(Composer).value) and "␛[201~" in app.query_one(Composer).value


async def test_copy_and_c_leave_the_text_as_shown(store: Store) -> None:
    app = await hostile_chat(store)
    async with app.run_test(size=SIZE) as pilot:
        await type_and_send(pilot, "/copy")
        await wait_for(pilot, lambda: any("Copied the last reply" in n for n in notices(app)))
        assert app.clipboard.startswith("Reply ") and clean(app.clipboard) and "␛[201~echo RAN" in app.clipboard
        await select(pilot, 1)
        await pilot.press("c")
        await wait_for(pilot, lambda: app.clipboard.startswith("Imported line"))
        assert clean(app.clipboard)


async def test_an_edit_on_a_full_disk_stays_in_the_editor_and_is_stored_once_there_is_room(tmp_path: Path) -> None:
    store = await Store.open(tmp_path / "omoide.db")
    app = await hostile_chat(store)
    async with app.run_test(size=SIZE) as pilot:
        await select(pilot, 0)
        await pilot.press("e")
        await wait_for(pilot, lambda: isinstance(app.screen, MessageEditor))
        typed = "A rewritten reply I would hate to lose " + "word " * 800
        app.screen.query_one(TextArea).text = typed
        pages = (await store.db.one("PRAGMA page_count"))[0]
        await store.db.conn.execute(f"PRAGMA max_page_count = {pages}")  # SQLite's own 'disk full'
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: any("full" in n for n in notices(app)))
        await wait_for(pilot, lambda: isinstance(app.screen, MessageEditor))
        assert app.screen.query_one(TextArea).text == typed
        await store.db.conn.execute(f"PRAGMA max_page_count = {pages * 100}")  # space is freed
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: not isinstance(app.screen, MessageEditor) and not app.turn_running)
        head = await store.messages.get((await app.session.refresh()).head_id)
        assert head.content == typed.strip()
    await store.close()


async def test_a_keymap_naming_no_key_or_holding_escapes_is_said_at_start_and_never_shown(store: Store) -> None:
    keymap = {"chat.nonsense": "f9", "no.such.id": "f8", "chat.diary": "\x1b]0;PWNED\x07", "message.edit": "w"}
    app = await hostile_chat(store, keymap=keymap)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: any(n.count("[ui.keymap]") == 3 for n in notices(app)))  # one notice for all
        said = " ".join(notices(app))
        assert "'chat.nonsense' is not a key of omoide; it is ignored." in said and "'no.such.id'" in said
        assert "'chat.diary': the key holds control characters" in said
        rows = dict((what, keys) for keys, what in app.key_help())
        assert rows["Select a message (then w, d, r, c, b act on it)"] == "^↑"
        assert rows["Diary"] == "^d"  # the hostile key was not taken
        assert all(clean(keys) for keys, _ in app.key_help())
        await type_and_send(pilot, "/help")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
        shot_is_inert(app)
        assert isinstance(app.screen, HelpScreen)
        assert ("^↑", "Select a message (then w, d, r, c, b act on it)") in app.screen.keys
        await pilot.press("escape")
        await pilot.press("f1")
        await pilot.press(*"select")
        await pilot.pause()
        shot_is_inert(app)
        await pilot.press("escape")
        await select(pilot, 0)
        await pilot.press("w")
        await wait_for(pilot, lambda: isinstance(app.screen, MessageEditor))


async def test_bidi_overrides_in_a_name_are_shown_not_obeyed(store: Store) -> None:
    sly = Character(id="sly", name="Sly\u202egnp.exe\u202c", first_message="Hi.")
    session = await ChatSession.open(store, sly, Settings(user_name="Kai\u2067x"), ScriptedBackend())
    app = OmoideApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        shot = app.export_screenshot()
        assert "\u202e" not in shot and "\u2067" not in shot and "Sly\ufffdgnp.exe" in shot
        assert isinstance(app.transcript.views()[0], MessageView)


async def test_the_palette_answers_at_once_on_a_name_of_repeated_letters(store: Store) -> None:
    """Textual's matcher took 48 s for 8 typed letters and 158 s for 10 on this name."""
    from textual.command import CommandPalette

    from omoide import locations

    folder = locations.user_characters_dir() / "aaa"
    folder.mkdir(parents=True)
    (folder / "character.toml").write_text(f'name = "{" ".join("a" * 40)}"\n')
    app = await hostile_chat(store)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f1")
        await wait_for(pilot, lambda: isinstance(app.screen, CommandPalette))
        await pilot.press(*"a" * 14)
        palette = app.screen
        await wait_for(pilot, lambda: any("Character: a a a" in str(o.prompt) for o in palette.query_one("CommandList").options),
                       timeout=20)
        await pilot.press(*"a" * 60)  # more letters than the name holds: no hit, and at once
        await wait_for(pilot, lambda: not any("Character: a a a" in str(o.prompt) for o in palette.query_one("CommandList").options),
                       timeout=20)
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, CommandPalette))


async def test_pins_says_which_pins_are_not_sent(store: Store) -> None:
    from omoide.tui.screens.text_modal import TextModal

    app = await hostile_chat(store, context_size=2048)
    for i in range(40):
        await app.session.pins.pin_text(f"Fact {i}: the lantern by door {i} is painted a colour of its own, not the next one's.")
    async with app.run_test(size=SIZE) as pilot:
        await type_and_send(pilot, "/pins")
        await wait_for(pilot, lambda: isinstance(app.screen, TextModal))
        assert isinstance(app.screen, TextModal)
        shown = app.screen.markdown
        import re

        left = int(re.search(r"\*\*(\d+) of the 40 pins are not sent\*\*, the oldest", shown).group(1))  # type: ignore[union-attr]
        assert 0 < left < 40 and shown.count(", not sent)*") == left
        assert (40 - left) * 85 / 4 <= 2048 / 10 + 10  # what is sent (85 characters a pin) fits a tenth of the context
        assert "Fact 0:" in shown and "not sent)*" in shown.split("Fact 0:")[1].split("\n")[0]
        assert "not sent" not in shown.split("Fact 39:")[1].split("\n")[0]
