"""Portraits in the character picker and on the first-run screen: the card's
image drawn in half-blocks beside the list (a real PNG file, decoded by Pillow
in a thread), and names only with `[ui] portraits = false`."""

from __future__ import annotations

from pathlib import Path

from PIL import Image
from rich.style import Style
from textual.widgets import OptionList

from omoide import locations
from omoide.characters.library import scan_characters
from omoide.characters.portrait import portrait_file
from omoide.config.settings import Settings
from omoide.chat.session import ChatSession
from omoide.store import Store
from omoide.tui.app import OmoideApp
from omoide.tui.screens.characters import CharacterPicker
from omoide.tui.widgets.portrait import Portrait, half_blocks
from tests.scripted import ScriptedBackend
from tests.tui.test_app import MIKA, texts, type_and_send, wait_for

SIZE = (80, 24)


def painted_character(name: str = "Aoi") -> Path:
    """A user character whose folder holds card.png: red above, blue below."""
    folder = locations.user_characters_dir() / name.lower()
    folder.mkdir(parents=True)
    (folder / "character.toml").write_text(f'name = "{name}"\ndescription = "{{{{char}}}} paints harbour boats."\n')
    image = Image.new("RGB", (40, 40), (220, 30, 30))
    image.paste((30, 60, 220), (0, 20, 40, 40))
    image.save(folder / "card.png")
    return folder / "card.png"


def test_a_card_image_is_drawn_in_half_blocks(tmp_path: Path) -> None:
    path = painted_character()
    assert portrait_file(next(c for c in scan_characters().characters if c.id == "aoi")) == path
    drawing = half_blocks(path, 4, 2)
    assert drawing is not None and drawing.plain == "▀▀▀▀\n▀▀▀▀"
    rows = [[span.style for span in drawing.spans if span.start // 5 == row] for row in (0, 1)]
    for style in rows[0]:  # the upper half: red on red
        assert isinstance(style, Style) and style.color and style.bgcolor
        assert style.color.triplet and style.color.triplet.red > 200 > style.color.triplet.blue
    for style in rows[1]:  # the lower half: blue on blue
        assert isinstance(style, Style) and style.color and style.bgcolor
        assert style.bgcolor.triplet and style.bgcolor.triplet.blue > 200 > style.bgcolor.triplet.red


def test_a_broken_image_draws_nothing(tmp_path: Path) -> None:
    path = painted_character()
    path.write_bytes(b"\x89PNG\r\n\x1a\nnot really")
    assert half_blocks(path, 4, 2) is None


async def picker_app(store: Store, **settings: object) -> OmoideApp:
    session = await ChatSession.open(store, MIKA, Settings(user_name="Kai", welcomed=True, **settings), ScriptedBackend())
    return OmoideApp(session)


async def test_the_picker_shows_the_highlighted_characters_portrait(store: Store) -> None:
    painted_character()
    app = await picker_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+t")
        await wait_for(pilot, lambda: isinstance(app.screen, CharacterPicker))
        picker = app.screen
        portrait = picker.query_one(Portrait)
        ids = [c.id for c in picker.characters]
        picker.query_one("OptionList").highlighted = ids.index("aoi")  # type: ignore[attr-defined]
        await wait_for(pilot, lambda: portrait.display and "▀" in str(portrait.render()))
        picker.query_one("OptionList").highlighted = ids.index("wren")  # type: ignore[attr-defined]
        await wait_for(pilot, lambda: not portrait.display)  # Wren's card has no image


async def test_portraits_off_shows_names_only(store: Store) -> None:
    painted_character()
    app = await picker_app(store, portraits=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+t")
        await wait_for(pilot, lambda: isinstance(app.screen, CharacterPicker))
        picker = app.screen
        picker.query_one("OptionList").highlighted = [c.id for c in picker.characters].index("aoi")  # type: ignore[attr-defined]
        await pilot.pause()
        assert not picker.query_one(Portrait).display


async def test_the_first_run_screen_shows_the_highlighted_characters_portrait(store: Store, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.delenv("OMOIDE_WELCOMED")
    painted_character()
    session = await ChatSession.open(store, MIKA, Settings(user_name="Kai", discover_servers=[]), ScriptedBackend())
    app = OmoideApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: bool(app.screen.query("#first-run-characters")))
        options = app.screen.query_one("#first-run-characters", OptionList)
        portrait = app.screen.query_one("#first-run-portrait", Portrait)
        options.highlighted = [c.id for c in scan_characters().characters].index("aoi")
        await wait_for(pilot, lambda: portrait.display and "▀" in str(portrait.render()))
        options.highlighted = [c.id for c in scan_characters().characters].index("suzune")
        await wait_for(pilot, lambda: not portrait.display)


async def scene_with_aoi(store: Store, **settings: object) -> OmoideApp:
    from omoide.characters.library import find_character

    painted_character()
    session = await ChatSession.open(store, find_character("suzune"), Settings(user_name="Kai", scene_seed=3, gossip_rate=0.0, **settings),
                                     ScriptedBackend(default=lambda messages: ["Here."]), others=[find_character("aoi")])
    return OmoideApp(session)


async def test_a_scene_draws_each_speakers_portrait_small_beside_their_replies(store: Store) -> None:
    app = await scene_with_aoi(store)
    async with app.run_test(size=(110, 36)) as pilot:
        await type_and_send(pilot, "/next Aoi")
        await wait_for(pilot, lambda: texts(app)[-1][0] == "Aoi" and app.reply_view is None, timeout=60)
        await type_and_send(pilot, "/next Suzune")
        await wait_for(pilot, lambda: texts(app)[-1][0] == "Suzune" and app.reply_view is None, timeout=60)
        aoi, suzune = app.transcript.views()[-2:]
        await wait_for(pilot, lambda: aoi.query_one(Portrait).display)
        assert str(aoi.query_one(Portrait).render()).count("▀") == 6 * 3
        assert not suzune.query(Portrait)  # Suzune's card has no image: her name alone


async def test_portraits_off_leaves_a_scene_in_names_only(store: Store) -> None:
    app = await scene_with_aoi(store, portraits=False)
    async with app.run_test(size=(110, 36)) as pilot:
        await type_and_send(pilot, "/next Aoi")
        await wait_for(pilot, lambda: texts(app)[-1][0] == "Aoi" and app.reply_view is None, timeout=60)
        assert not app.transcript.query(Portrait)
