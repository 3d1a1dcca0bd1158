"""Snapshots of what the screen looks like: the chat with the diary open, and the
prompt inspector. Timestamps and the clock are pinned so the pictures are stable.
Update them with `pytest tests/tui/test_snapshots.py --snapshot-update` and look
at the SVGs before committing."""

from __future__ import annotations

import asyncio
from datetime import datetime, timezone
from pathlib import Path

import pytest

from omoide.config.settings import Settings
from omoide.domain.chat import DiaryAuthor, Role
from omoide.chat.session import ChatSession
from omoide.store import Store
from omoide.tui.app import OmoideApp
from tests.scripted import ScriptedBackend
from tests.tui.test_app import MIKA

SIZE = (100, 30)
NOON = datetime(2026, 4, 1, 12, 0, tzinfo=timezone.utc)


@pytest.fixture
def pinned_time(monkeypatch: pytest.MonkeyPatch) -> None:
    from omoide.scene import opening
    from omoide.tui.widgets import diary, message

    monkeypatch.setattr(message, "when", lambda moment: "04/01 22:15")
    monkeypatch.setattr(diary, "day", lambda moment: "04/01")
    monkeypatch.setattr(opening, "chat_title", lambda names, started: f"Chat with {names[0]} · Apr 1, 22:15")  # when it began


def app_with_a_short_chat(tmp_path: Path) -> tuple[OmoideApp, Store]:
    """Built in its own event loop: the app runs in another (aiosqlite's thread serves both)."""

    async def build() -> tuple[OmoideApp, Store]:
        store = await Store.open(tmp_path / "omoide.db")
        settings = Settings(user_name="Kai")
        session = await ChatSession.open(store, MIKA, settings, ScriptedBackend())
        session.clock = lambda: NOON
        chat, head = session.chat, session.chat.head_id
        for role, text in [
            (Role.USER, "I found that café you mentioned."),
            (Role.ASSISTANT, "*eyes widen* Wait, really? The one near the station?"),
            (Role.USER, "Yeah, the matcha latte was actually good."),
            (Role.ASSISTANT, "*small smile* ...Told you."),
        ]:
            head = (await store.messages.add(chat.id, head, role, text)).id
        await store.memory.add_diary_entry(chat.id, head, "He went to the café. He listened to me.", DiaryAuthor.CHARACTER)
        await session.user.remember("Kai prefers matcha to coffee.")
        await session.build_prompt(head)
        return OmoideApp(session), store

    return asyncio.run(build())


def test_the_chat_with_the_diary_open(snap_compare, tmp_path: Path, pinned_time: None) -> None:  # type: ignore[no-untyped-def]
    app, store = app_with_a_short_chat(tmp_path)
    try:
        assert snap_compare(app, press=["ctrl+d"], terminal_size=SIZE)
    finally:
        asyncio.run(store.close())


def test_the_prompt_inspector(snap_compare, tmp_path: Path, pinned_time: None) -> None:  # type: ignore[no-untyped-def]
    app, store = app_with_a_short_chat(tmp_path)
    try:
        assert snap_compare(app, press=["ctrl+p"], terminal_size=SIZE)
    finally:
        asyncio.run(store.close())


def test_help_at_80x24_names_the_new_keys(snap_compare, tmp_path: Path, pinned_time: None, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Scrolled to its keys: F1 (palette), F2 (mouse), Up/Down and the newline key, whole at 80 columns
    (outside tmux: inside it, /help says which newline keys work there)."""
    monkeypatch.delenv("TMUX", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    app, store = app_with_a_short_chat(tmp_path)

    async def to_the_keys(pilot) -> None:  # type: ignore[no-untyped-def]
        await pilot.press("/", "h", "e", "l", "p", "enter")
        await pilot.pause()
        await pilot.press("end")
        await pilot.pause()

    try:
        assert snap_compare(app, run_before=to_the_keys, terminal_size=(80, 24))
    finally:
        asyncio.run(store.close())


def test_the_character_picker_with_a_portrait(snap_compare, tmp_path: Path, pinned_time: None) -> None:  # type: ignore[no-untyped-def]
    """80x24: the highlighted character's card image, drawn in half-blocks, beside the list."""
    from tests.tui.test_portraits import painted_character

    painted_character()

    async def build() -> tuple[OmoideApp, Store]:
        store = await Store.open(tmp_path / "omoide.db")
        session = await ChatSession.open(store, MIKA, Settings(user_name="Kai", welcomed=True), ScriptedBackend())
        return OmoideApp(session), store

    async def portrait_drawn(pilot) -> None:  # type: ignore[no-untyped-def]
        from omoide.tui.widgets.portrait import Portrait
        from tests.tui.test_app import wait_for

        await pilot.press("ctrl+t")
        await wait_for(pilot, lambda: bool(pilot.app.screen.query(Portrait)) and pilot.app.screen.query_one(Portrait).display)

    app, store = asyncio.run(build())
    try:
        assert snap_compare(app, run_before=portrait_drawn, terminal_size=(80, 24))
    finally:
        asyncio.run(store.close())
