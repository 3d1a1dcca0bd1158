"""The first-run offer, through the Pilot: a fake Ollama on a local port is
found in the background and offered; each answer does what it says."""

from __future__ import annotations

import tomllib
from collections.abc import Iterator

import pytest

from omoide import locations
from omoide.config.settings import Settings, load_settings
from omoide.chat.session import ChatSession
from omoide.store import Store
from omoide.tui.app import OmoideApp
from omoide.tui.screens.first_run import FirstRunScreen
from omoide.tui.widgets.status import StatusBar
from tests.fakeservers import address, http_server, ollama
from tests.scripted import ScriptedBackend
from tests.tui.test_app import MIKA, SIZE, type_and_send, wait_for


@pytest.fixture
def olla(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    with http_server(ollama("llama3.1:8b", "qwen2.5:7b", reply="*Mika grins.* Served by Ollama.")) as server:
        monkeypatch.setenv("OMOIDE_DISCOVER_SERVERS", f'["{address(server)}"]')
        yield address(server)


async def make_app(store: Store) -> OmoideApp:
    settings = load_settings(user_name="Kai")
    session = await ChatSession.open(store, MIKA, settings, ScriptedBackend(model="smollm2-135m"))
    return OmoideApp(session)


def saved_config() -> dict[str, object]:
    path = locations.config_file()
    return tomllib.loads(path.read_text()) if path.exists() else {}


def offer_done(app: OmoideApp) -> bool:
    return all(w.is_finished for w in app.workers if w.group == "first-run")


async def wait_for_offer(pilot) -> None:  # type: ignore[no-untyped-def]
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, FirstRunScreen))
    await pilot.pause()  # laid out, so clicks land on the buttons


async def test_a_running_ollama_is_offered_and_made_the_default(store: Store, olla: str) -> None:
    app = await make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for_offer(pilot)
        text = " ".join(str(s.render()) for s in app.screen.query("Static"))
        assert "smollm2-135m" in text
        await pilot.press("down")  # the second model
        await pilot.click("#default")
        await wait_for(pilot, lambda: not isinstance(app.screen, FirstRunScreen))
        assert saved_config() == {"backend": {"kind": "openai", "base_url": olla + "/v1", "model": "qwen2.5:7b"}}
        assert "qwen2.5:7b" in app.query_one(StatusBar).backend
        await type_and_send(pilot, "Hi!")
        await wait_for(pilot, lambda: any("Served by Ollama." in v.text for v in app.transcript.views()))
    assert load_settings().backend.model == "qwen2.5:7b"


async def test_use_it_for_this_chat_saves_nothing(store: Store, olla: str) -> None:
    app = await make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for_offer(pilot)
        await pilot.click("#once")
        await wait_for(pilot, lambda: not isinstance(app.screen, FirstRunScreen))
        assert app.session.backend.model == "llama3.1:8b"
        assert saved_config() == {}


async def test_keeping_the_embedded_model_is_remembered_and_not_asked_again(store: Store, olla: str) -> None:
    app = await make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for_offer(pilot)
        await pilot.click("#keep")
        await wait_for(pilot, lambda: not isinstance(app.screen, FirstRunScreen))
        assert app.session.backend.model == "smollm2-135m"
    assert saved_config() == {"backend": {"kind": "local"}}
    again = await make_app(store)
    async with again.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert not [w for w in again.workers if w.group == "first-run"]
        assert not isinstance(again.screen, FirstRunScreen)


async def test_escape_decides_nothing(store: Store, olla: str) -> None:
    app = await make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for_offer(pilot)
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, FirstRunScreen))
        assert app.session.backend.model == "smollm2-135m" and saved_config() == {}


async def test_no_offer_when_a_backend_is_configured(store: Store, olla: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OMOIDE_BASE_URL", olla + "/v1")
    app = await make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert not [w for w in app.workers if w.group == "first-run"]


async def test_no_offer_when_no_server_answers(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.fakeservers import closed_port

    monkeypatch.setenv("OMOIDE_DISCOVER_SERVERS", f'["{closed_port()}"]')
    app = await make_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: offer_done(app))
        await pilot.pause()
        assert not isinstance(app.screen, FirstRunScreen)
        assert app.query_one("#input").has_focus
