"""The first-run screen and the character picker, through the Pilot (issue 23,
observations 2 and 4; issue 25, cases 2 and 3): your name asked once and used
everywhere, every character offered with its one-line description, a card
imported from the picker, and a hostile model name on the offer shown inert."""

from __future__ import annotations

import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest
from textual.widgets import Input, OptionList

from omoide import locations
from omoide.characters.library import list_characters
from omoide.characters.model import Character
from omoide.config.settings import load_settings
from omoide.chat.session import ChatSession
from omoide.store import Store
from omoide.tui.app import OmoideApp
from tests.fakeservers import address, http_server, ollama
from tests.scripted import ScriptedBackend
from tests.tui.test_app import type_and_send, wait_for

CARDS = Path(__file__).parents[1] / "data" / "cards"
NOOR = Character(id="noor", name="Noor", description="{{char}} keeps bees on a rooftop. She talks to {{user}} about them.",
                 first_message="*Noor lifts her veil.* Oh, {{user}}! You came up after all.")
SIZE = (100, 40)


@pytest.fixture(autouse=True)
def first_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OMOIDE_WELCOMED")  # the conftest gives every other test the welcome already


def saved_config() -> dict[str, object]:
    path = locations.config_file()
    return tomllib.loads(path.read_text()) if path.exists() else {}


def screen_text(app: OmoideApp) -> str:
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


async def open_app(store: Store, character: Character = NOOR) -> OmoideApp:
    """As `omoide chat` opens it (`Runtime.start`): the settings, with who you are from the profile."""
    settings = load_settings()
    try:
        from omoide.world import identity
    except ImportError:  # before issue 23 (to see these tests fail there): the setting was the name
        pass
    else:
        settings = await identity.resolve(settings, store)
    session = await ChatSession.open(store, character, settings, ScriptedBackend(model="smollm2-135m"))
    return OmoideApp(session)


async def test_the_name_asked_on_first_run_is_in_the_card_and_the_profile_and_asked_once(store: Store) -> None:
    app = await open_app(store)
    async with app.run_test(size=SIZE) as pilot:
        assert app.transcript.views()[0].text == "*Noor lifts her veil.* Oh, You! You came up after all."
        await wait_for(pilot, lambda: bool(app.screen.query("#first-run-name")))
        await pilot.pause()
        assert "What should the characters call you?" in screen_text(app)
        app.screen.query_one("#first-run-name", Input).focus()
        for key in "Kai":
            await pilot.press(key)
        await pilot.click("#keep")
        await wait_for(pilot, lambda: not app.screen.query("#first-run-name"))
        await wait_for(pilot, lambda: app.transcript.views()[0].text == "*Noor lifts her veil.* Oh, Kai! You came up after all.")
        await type_and_send(pilot, "Hi!")
        await wait_for(pilot, lambda: len(app.transcript.views()) == 3 and app.reply_view is None)
        assert app.transcript.views()[1].speaker == "Kai"
        system = app.session.last_prompt.messages[0]["content"]  # type: ignore[union-attr]
        assert "She talks to Kai about them." in system and "to You" not in system
    profile = await store.profile.get()
    assert profile.name == "Kai"  # the one place that says who you are
    assert saved_config()["ui"] == {"welcomed": True}
    again = await open_app(store)
    assert again.session.user.name == "Kai"
    async with again.run_test(size=SIZE) as pilot:
        await pilot.pause(1.0)  # past FIRST_RUN_DELAY: the screen would be up by now
        assert not [w for w in again.workers if w.group == "first-run"]
        assert not again.screen.query("#first-run-name")


async def test_escape_keeps_the_defaults_and_the_welcome_is_not_shown_again(store: Store) -> None:
    app = await open_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: bool(app.screen.query("#first-run-name")))
        await pilot.press("escape")
        await wait_for(pilot, lambda: not app.screen.query("#first-run-name"))
        assert app.session.user.name == "You" and app.session.character.id == "noor"
        assert app.query_one("#input").has_focus
    assert saved_config() == {"ui": {"welcomed": True}}
    assert (await store.profile.get()).name == ""


async def test_the_configured_user_name_fills_the_profile(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    """`user_name = "Kai"` in the config and an empty profile: they no longer disagree."""
    from omoide.chat.runtime import Workspace

    locations.config_file().parent.mkdir(parents=True, exist_ok=True)
    locations.config_file().write_text('user_name = "Kai"\n')
    workspace = await Workspace.open()
    try:
        assert workspace.settings.user.name == "Kai"
        assert (await workspace.store.profile.get()).name == "Kai"
        await workspace.store.profile.set_field("name", "Kaito")  # `omoide profile edit`
    finally:
        await workspace.aclose()
    workspace = await Workspace.open()
    try:
        assert workspace.settings.user.name == "Kaito"  # the profile is who you are
    finally:
        await workspace.aclose()


async def test_the_first_run_screen_offers_every_character_and_the_choice_opens_their_chat(store: Store) -> None:
    app = await open_app(store, list_characters()[0])
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: bool(app.screen.query("#first-run-characters")))
        await pilot.pause()  # laid out, so the click lands on the button
        options = app.screen.query_one("#first-run-characters", OptionList)
        names = [str(options.get_option_at_index(i).prompt).split("\n")[0] for i in range(options.option_count)]
        assert names == [c.display_name for c in list_characters()]
        wren = [c.id for c in list_characters()].index("wren")
        options.highlighted = wren
        await pilot.click("#keep")
        await wait_for(pilot, lambda: app.session.character.id == "wren")
        assert "Wren" in app.transcript.views()[0].speaker


async def test_the_picker_lists_every_character_with_its_description_and_imports_a_card(store: Store) -> None:
    app = await open_app(store, list_characters()[0])
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: bool(app.screen.query("#first-run-name")))
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.query_one("#input").has_focus)
        await type_and_send(pilot, "/characters")
        await wait_for(pilot, lambda: bool(app.screen.query("#characters")))
        await pilot.pause()
        shown = screen_text(app)
        for character in list_characters():
            assert character.display_name in shown
        assert "Wren Halloran, 68, kept the Skerry Point lighthouse for thirty years." in shown  # wren's one line
        await pilot.press("i")
        await wait_for(pilot, lambda: bool(app.screen.query("#card-path")))
        app.screen.query_one("#card-path", Input).value = str(CARDS / "v2_orin.json")
        await pilot.press("enter")
        await wait_for(pilot, lambda: bool(app.screen.query("#characters")) and "Orin" in screen_text(app))
        options = app.screen.query_one("#characters", OptionList)
        assert options.option_count == len(list_characters()) == 3
        await pilot.press("enter")  # the imported card is highlighted: chat with it
        await wait_for(pilot, lambda: app.session.character.name == "Orin")
        await pilot.press("escape")
        await pilot.press("ctrl+t")  # the key opens it too
        await wait_for(pilot, lambda: bool(app.screen.query("#characters")))


@pytest.fixture
def hostile_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    hostile = "evil\x1b]52;c;cHduZWQ=\x07\x1b]0;pwned\x07\x1b[2J\x9b31m[/][bold]x"
    with http_server(ollama(hostile, "[/]")) as server:
        monkeypatch.setenv("OMOIDE_DISCOVER_SERVERS", f'["{address(server)}"]')
        yield address(server)


@pytest.mark.parametrize("welcomed", [False, True])
async def test_a_hostile_model_name_on_the_offer_is_inert_and_never_crashes(
    store: Store, hostile_server: str, monkeypatch: pytest.MonkeyPatch, welcomed: bool
) -> None:
    """Issue 25 cases 2 and 3: OSC/CSI/C1 controls and `[/]` in a discovered
    model's name, on the first-run screen's options."""
    if welcomed:
        monkeypatch.setenv("OMOIDE_WELCOMED", "true")
    app = await open_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: bool(app.screen.query("#first-run-models")))
        await pilot.pause()
        shot = app.export_screenshot()
        assert "\x1b" not in shot and "\x07" not in shot and "\x9b" not in shot
        text = screen_text(app)
        assert "evil␛]52;c;cHduZWQ=␇␛]0;pwned␇␛[2J" in text and "[/][bold]x" in text
        assert "[/]  ·" in text  # the other model, named "[/]", as text
        await pilot.press("escape")
        await wait_for(pilot, lambda: not app.screen.query("#first-run-models"))
        assert app.is_running


async def test_a_name_changed_in_the_profile_is_who_you_are_at_once(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    from textual.widgets import TextArea

    monkeypatch.setenv("OMOIDE_WELCOMED", "true")
    app = await open_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await type_and_send(pilot, "/profile")
        await wait_for(pilot, lambda: bool(app.screen.query("#profile-text")))
        area = app.screen.query_one("#profile-text", TextArea)
        area.text = area.text.replace("name:", "name: Ren", 1)
        await pilot.press("ctrl+s")
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.session.user.name == "Ren")
        await wait_for(pilot, lambda: app.transcript.views()[0].text == "*Noor lifts her veil.* Oh, Ren! You came up after all.")
    assert (await store.profile.get()).name == "Ren"


async def test_a_wrapped_description_in_the_picker_keeps_one_left_edge(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    """At 80x24 a character's one line wraps: its second row started two columns left
    of its first (the indent was typed before the text, so only the first row had it)."""
    monkeypatch.setenv("OMOIDE_WELCOMED", "true")
    app = await open_app(store, list_characters()[0])
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("ctrl+t")
        await wait_for(pilot, lambda: bool(app.screen.query("#characters")))
        await pilot.pause()
        rows = screen_text(app).splitlines()
    first = next(i for i, row in enumerate(rows) if "Wren Halloran, 68" in row)
    assert "Wren Halloran" not in rows[first + 1] and rows[first + 1].strip("│▊▎ ")  # it wrapped
    edge = lambda row: len(row) - len(row.lstrip("│▊▎ "))  # noqa: E731
    assert edge(rows[first + 1]) == edge(rows[first]), rows[first : first + 2]


async def test_at_80x24_the_first_run_screen_says_from_its_first_sight_how_to_move_and_leave(store: Store) -> None:
    """At 80x24 the welcome is taller than the screen: its buttons and the line saying
    Esc keeps the defaults were below the fold, with nothing on sight saying so. The
    box's border says it, and the line stays at the bottom as before."""
    app = await open_app(store, list_characters()[0])
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: bool(app.screen.query("#first-run-name")))
        await pilot.pause()
        rows = screen_text(app).splitlines()
        bottom = next(row for row in rows if "╰" in row)
        assert "Esc keeps the defaults" in bottom and "Tab" in bottom, bottom


async def test_keys_typed_before_the_welcome_go_to_its_name_field_and_nothing_is_sent_as_you(store: Store) -> None:
    """Issue 42: keys typed as the chat opens went to the composer, and the message was
    sent as "You" while the welcome was still to come. They are the name field's now,
    up to their first Enter (tests/integration/test_welcome_terminal.py has the keys
    after it, typed before the first paint, wait for the name)."""
    app = await open_app(store)
    backend = app.session.backend
    assert isinstance(backend, ScriptedBackend)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"Kai", "enter")  # at once, as the chat opens
        await wait_for(pilot, lambda: bool(app.screen.query("#first-run-name")))
        await wait_for(pilot, lambda: app.screen.query_one("#first-run-characters", OptionList).has_focus)  # the Enter moved on
        assert app.screen.query_one("#first-run-name", Input).value == "Kai"
        assert not backend.calls and len(app.transcript.views()) == 1  # nothing went to the model as "You"
        await pilot.click("#keep")
        await wait_for(pilot, lambda: app.session.user.name == "Kai" and app.query_one("#input").has_focus)
        await type_and_send(pilot, "Hi!")
        await wait_for(pilot, lambda: len(app.transcript.views()) == 3 and app.reply_view is None)
        assert (app.transcript.views()[1].speaker, app.transcript.views()[1].text) == ("Kai", "Hi!")
        system = backend.calls[0]["messages"][0]["content"]
        assert "She talks to Kai about them." in system and "to You" not in system


async def test_escape_keeps_a_name_typed_and_says_how_to_set_one_left_empty(store: Store) -> None:
    """Esc in the name field closed the welcome and threw the name typed away, leaving
    you "You" with no word of how to change it."""
    app = await open_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: bool(app.screen.query("#first-run-name")))
        await pilot.pause()
        await pilot.press(*"Ren", "escape")
        await wait_for(pilot, lambda: not app.screen.query("#first-run-name"))
        await wait_for(pilot, lambda: app.session.user.name == "Ren")
        assert app.transcript.views()[0].text == "*Noor lifts her veil.* Oh, Ren! You came up after all."
    assert (await store.profile.get()).name == "Ren"


async def test_escape_with_no_name_says_how_to_set_it_later(store: Store) -> None:
    from tests.tui.test_app import notices

    app = await open_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: bool(app.screen.query("#first-run-name")))
        await pilot.press("escape")
        await wait_for(pilot, lambda: any("/profile" in n for n in notices(app)))
        assert app.session.user.name == "You"
