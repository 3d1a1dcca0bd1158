"""A model download with no network (Hugging Face's address points at a closed
local port): it says once, in plain words, that it failed and how to try again
in the TUI; the bar under the composer stops; omoide.log has the cause; and
the way it names to try again works once the network is back."""

from __future__ import annotations

import logging
import socket

import pytest
from textual.widgets import OptionList, ProgressBar

from omoide.models.catalog import RECOMMENDED, models_dir
from omoide.store import Store
from tests.fakeservers import address, http_server
from tests.tui.test_app import type_and_send, wait_for
from tests.tui.test_model_offer import MODEL, SHA, SIZE, open_app


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])  # closed again when the with ends: nothing listens there


def download_notices(app) -> list[str]:  # type: ignore[no-untyped-def]
    return [str(n.message) for n in app._notifications if n.title == "Download"]


async def pick_in_models(app, pilot, name: str) -> None:  # type: ignore[no-untyped-def]
    await type_and_send(pilot, "/models")
    await wait_for(pilot, lambda: bool(app.screen.query("#models")))
    await pilot.pause()
    options = app.screen.query_one("#models", OptionList)
    labels = [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]
    options.highlighted = next(i for i, label in enumerate(labels) if name in label)
    await pilot.press("enter")


async def test_an_offline_download_says_once_that_it_failed_stops_its_bar_logs_why_and_can_be_retried(
    store: Store, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    port = closed_port()
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{port}")
    model = RECOMMENDED[0]
    app = await open_app(store)
    with caplog.at_level(logging.WARNING):
        async with app.run_test(size=SIZE) as pilot:
            await pick_in_models(app, pilot, model.name)
            await wait_for(pilot, lambda: app.downloads.state.phase == "failed", timeout=30)
            await pilot.press("escape")  # back to the chat, where the bar is
            await pilot.pause()
            [notice] = download_notices(app)
            assert f"Could not reach 127.0.0.1:{port}" in notice and "no network" in notice
            assert notice.count("The download of") == 1 and notice.count("failed") == 1  # said once
            assert f"To try again: /models, then Enter on {model.name}." in notice
            assert "same command" not in notice  # a command line's advice, not the TUI's
            bar = app.query_one("#download")
            assert bar.has_class("shown") and "Could not reach" in str(bar.query_one("#download-text").render())
            assert not bar.query_one(ProgressBar).display  # stopped: no bar animating as if it ran
            assert any("download of" in r.getMessage() and "ConnectError" in r.getMessage() for r in caplog.records)

            # Online again: the way the notice names works.
            headers = {"x-linked-etag": f'"{SHA}"', "x-linked-size": str(len(MODEL))}
            with http_server(file=MODEL, file_headers=headers) as server:
                monkeypatch.setenv("HF_ENDPOINT", address(server))
                await pick_in_models(app, pilot, model.name)
                await wait_for(pilot, lambda: app.downloads.state.phase == "done", timeout=60)
            assert (models_dir() / model.file).read_bytes() == MODEL
