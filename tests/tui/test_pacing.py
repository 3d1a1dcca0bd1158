"""A streaming reply redraws rarely while you type, so your keys show at once."""

from __future__ import annotations

import pytest

from omoide.tui.widgets import pacing


@pytest.fixture(autouse=True)
def no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pacing, "_last_key", float("-inf"))


def press_at(monkeypatch: pytest.MonkeyPatch, t: float) -> None:
    monkeypatch.setattr(pacing.time, "monotonic", lambda: t)
    pacing.key_pressed()


def test_without_typing_a_reply_redraws_every_flush_interval() -> None:
    assert pacing.hold_for(shown_at=10.0, now=10.0) == pytest.approx(pacing.FLUSH_INTERVAL)
    assert pacing.hold_for(shown_at=10.0, now=10.0 + pacing.FLUSH_INTERVAL) == 0


def test_while_typing_it_redraws_once_right_after_each_key_then_waits_for_the_next(monkeypatch: pytest.MonkeyPatch) -> None:
    press_at(monkeypatch, 20.0)
    # Shown before the key: it redraws once the key is on screen, not before.
    assert pacing.hold_for(shown_at=19.9, now=20.0) == pytest.approx(pacing.AFTER_KEY)
    assert pacing.hold_for(shown_at=19.9, now=20.0 + pacing.AFTER_KEY) == 0
    # Shown after the key: nothing more until the next key, or MAX_HOLD.
    shown = 20.0 + pacing.AFTER_KEY
    assert pacing.hold_for(shown_at=shown, now=shown + 0.2) == pytest.approx(pacing.MAX_HOLD - 0.2)
    press_at(monkeypatch, shown + 0.2)
    assert pacing.hold_for(shown_at=shown, now=shown + 0.2) == pytest.approx(pacing.AFTER_KEY)


def test_a_flusher_looks_again_soon_so_a_key_brings_the_redraw_forward(monkeypatch: pytest.MonkeyPatch) -> None:
    press_at(monkeypatch, 30.0)
    monkeypatch.setattr(pacing.time, "monotonic", lambda: 30.1)
    assert 0 < pacing.next_check(shown_at=30.05) <= pacing.RECHECK
