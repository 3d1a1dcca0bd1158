"""A real model one key away (issue 23, observation 3), through the Pilot and a
local file server standing in for Hugging Face: the status bar names the
embedded model a demo; with no server found the first-run screen offers the
recommended model, which downloads in the background with progress while you
chat, resumes after the connection drops (and after a restart), is checked,
and is switched to when whole. /models lists, downloads and switches too."""

from __future__ import annotations

import hashlib
import os
import re
import tomllib
from collections.abc import Iterator

import pytest
from textual.widgets import OptionList

from omoide import locations
from omoide.config.settings import load_settings
from omoide.models.catalog import models_dir
from omoide.chat.session import ChatSession
from omoide.store import Store
from omoide.tui.app import OmoideApp
from tests.fakeservers import address, http_server
from tests.scripted import ScriptedBackend
from tests.tui.test_app import MIKA, type_and_send, wait_for

MODEL = b"GGUF" + os.urandom(3_000_000)
SHA = hashlib.sha256(MODEL).hexdigest()
CUT = 1_000_000
SIZE = (110, 40)


class DemoBackend(ScriptedBackend):
    """Stands in for the embedded SmolLM2 (what `omoide chat` runs with no server)."""

    name = "local"
    embedded = True


@pytest.fixture
def hugging_face(monkeypatch: pytest.MonkeyPatch) -> Iterator[object]:
    headers = {"x-linked-etag": f'"{SHA}"', "x-linked-size": str(len(MODEL))}
    with http_server(file=MODEL, file_headers=headers, drop_after=CUT) as server:
        monkeypatch.setenv("HF_ENDPOINT", address(server))
        try:
            from omoide.tui import download
        except ImportError:  # before issue 23 (to see these tests fail there)
            pass
        else:
            monkeypatch.setattr(download, "RETRY_WAIT", 0.05)
        yield server


def status(app: OmoideApp) -> str:
    return str(app.query_one("StatusBar").render())


async def open_app(store: Store) -> OmoideApp:
    session = await ChatSession.open(store, MIKA, load_settings(), DemoBackend([["Hi."], ["Still here."]], model="SmolLM2-135M-Instruct.Q4_1"))
    return OmoideApp(session)


async def test_the_offer_downloads_with_progress_resumes_and_switches_while_you_chat(
    store: Store, hugging_face, monkeypatch: pytest.MonkeyPatch  # type: ignore[no-untyped-def]
) -> None:
    monkeypatch.delenv("OMOIDE_WELCOMED")
    app = await open_app(store)
    async with app.run_test(size=SIZE) as pilot:
        assert "small demo model" in status(app) and "/models" in status(app)
        await wait_for(pilot, lambda: bool(app.screen.query("#first-run-offer")))
        await pilot.pause()
        offered = app.screen.offer.model  # type: ignore[attr-defined]
        offer = str(app.screen.query_one("#first-run-offer").render())
        assert offered.name in offer and offered.size in offer and offered.ram in offer and offered.licence in offer
        assert "tokens a second here" in offer
        seen: list[tuple[str, int, int | None, bool]] = []
        app.downloads.subscribe(lambda s: seen.append((s.phase, s.done, s.total, bool(app.query("#download.shown")))))
        await pilot.click("#download")
        await wait_for(pilot, lambda: app.downloads.state.phase != "idle")
        await type_and_send(pilot, "Hello while it downloads")  # the chat goes on meanwhile
        await wait_for(pilot, lambda: app.downloads.state.phase in ("done", "failed"), timeout=60)
        assert app.downloads.state.phase == "done", app.downloads.state
        assert ("retrying", CUT, len(MODEL), True) in seen  # the drop, shown with its progress
        assert any(phase == "running" and total == len(MODEL) and shown for phase, _, total, shown in seen)
        assert [r.get("range") for r in hugging_face.requests] == [None, f"bytes={CUT}-"]  # resumed, not restarted
        await wait_for(pilot, lambda: "small demo model" not in status(app))
        path = models_dir() / offered.file
        assert path.read_bytes() == MODEL
        assert app.session.backend.model == path.stem and app.session.backend.name == "local"
        assert "Hello while it downloads" in [v.text for v in app.transcript.views()]
    config = tomllib.loads(locations.config_file().read_text())
    assert config["backend"] == {"kind": "local"} and config["embedded"]["model"] == offered.file and config["ui"]["welcomed"] is True


async def test_a_download_cut_off_by_quitting_resumes_at_the_next_start(store: Store, hugging_face) -> None:  # type: ignore[no-untyped-def]
    from omoide.models.catalog import RECOMMENDED

    model = RECOMMENDED[0]
    models_dir().mkdir(parents=True)
    (models_dir() / f"{model.file}.part").write_bytes(MODEL[:CUT])
    hugging_face.drop_after = None
    app = await open_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.downloads.state.phase == "done", timeout=60)
        assert hugging_face.requests[0]["range"] == f"bytes={CUT}-"
        assert (models_dir() / model.file).read_bytes() == MODEL
        assert app.session.backend.model == (models_dir() / model.file).stem


async def test_models_lists_downloads_and_switches(store: Store, hugging_face) -> None:  # type: ignore[no-untyped-def]
    from omoide.models.catalog import RECOMMENDED

    app = await open_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await type_and_send(pilot, "/models")
        await wait_for(pilot, lambda: bool(app.screen.query("#models")))
        await pilot.pause()
        options = app.screen.query_one("#models", OptionList)
        labels = [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]
        assert any(label.startswith("● smollm2-135m") for label in labels)  # the one in use, marked
        for model in RECOMMENDED:
            assert any(model.name in label and model.size in label and re.search(r"(about \d+ tokens?|under 1 token)/s here", label) for label in labels)
        wanted = next(i for i, label in enumerate(labels) if RECOMMENDED[1].name in label)
        options.highlighted = wanted
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.downloads.state.phase in ("done", "failed"), timeout=60)
        assert app.downloads.state.phase == "done", app.downloads.state
        assert "is downloaded and in use" in str(app.screen.query_one("#models-download").render())
        assert app.session.backend.model == (models_dir() / RECOMMENDED[1].file).stem
        # Back to the embedded model, from the same list.
        labels = [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]
        options.highlighted = next(i for i, label in enumerate(labels) if "smollm2-135m" in label)
        await pilot.press("enter")
        await wait_for(pilot, lambda: "SmolLM2" in app.session.backend.model or app.session.backend.model.startswith("smollm2"))


@pytest.mark.parametrize("width", [80, 100, 160])
async def test_the_status_line_fits_the_terminal_and_keeps_the_way_to_a_real_model(store: Store, width: int) -> None:
    """At 80 columns the status line was cut at "/models gets a real", the prompt's
    size and who is writing past the edge: it says less instead, and the demo
    note's /models, the prompt size and "is writing…" stay whole at every width."""
    import asyncio

    hold = asyncio.Event()
    session = await ChatSession.open(store, MIKA, load_settings(),
                                     DemoBackend([["Hi."], ["Still ", hold, "here."]], model="SmolLM2-135M-Instruct.Q4_1"))
    app = OmoideApp(session)
    async with app.run_test(size=(width, 24)) as pilot:
        await type_and_send(pilot, "Hello.")
        await wait_for(pilot, lambda: app.reply_view is None and "tok" in status(app))
        await type_and_send(pilot, "Still there?")
        await wait_for(pilot, lambda: "writing…" in status(app))
        await pilot.pause()
        for expected in ("/models", "Mika is writing…", " tok"):
            shown = app.screen._compositor.render_strips()[-1].text  # the bottom row, as the terminal shows it
            assert expected in shown, shown
        assert shown.strip().startswith("local · SmolLM2")
        if width >= 160:
            assert "(small demo model · /models gets a real one)" in shown and "SmolLM2-135M-Instruct.Q4_1" in shown
        hold.set()
        await wait_for(pilot, lambda: app.reply_view is None)
        shown = app.screen._compositor.render_strips()[-1].text
        assert "/models" in shown and " tok" in shown, shown


async def test_models_and_the_picker_show_their_keys_at_80x24(store: Store, omoide_home) -> None:  # type: ignore[no-untyped-def]
    """At 80x24 /models' list (18 rows) pushed its last line, which says what Enter
    and Esc do, below the box's edge; the picker did the same with a dozen
    characters. The list gives up rows instead; the rest scrolls."""
    from tests.integration.test_hostile_text import write_character
    from tests.tui.test_welcome import screen_text

    def boxed(app: OmoideApp) -> str:
        """The text inside the modal box, its rows joined."""
        rows = [row[row.index("│") + 1 : row.rindex("│")] for row in screen_text(app).splitlines() if row.count("│") >= 2]
        return " ".join(" ".join(rows).split())

    for i in range(12):
        write_character(omoide_home, f"extra{i}", f'name = "Extra {i}"\ndescription = "Extra number {i} waits by the door."\n')
    app = await open_app(store)
    async with app.run_test(size=(80, 24)) as pilot:
        await type_and_send(pilot, "/models")
        await wait_for(pilot, lambda: bool(app.screen.query("#models")))
        await pilot.pause()
        shown = boxed(app)
        assert "Enter: use the model" in shown and "Esc: close" in shown, screen_text(app)
        await pilot.press("escape")
        await pilot.press("ctrl+t")
        await wait_for(pilot, lambda: bool(app.screen.query("#characters")))
        await pilot.pause()
        shown = boxed(app)
        assert "Extra 0" in shown and "Enter: chat with them" in shown and "Esc: close" in shown, screen_text(app)
