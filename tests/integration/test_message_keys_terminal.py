"""The message keys in a real terminal (tmux): Ctrl+Up reaches the app through
tmux and selects the newest message, and `c` copies it through OSC 52 (tmux's
paste buffer receives it, as a terminal over SSH would)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.integration.test_real_terminal import terminal  # noqa: F401  (the fixture)
from tests.tmux import tmux

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")


async def test_ctrl_up_then_c_copies_the_newest_message_into_tmuxs_buffer(omoide_home: Path, terminal) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    pane = terminal(["chat", "suzune"], {"OMOIDE_DISCOVER_SERVERS": "[]"})
    await pane.until(lambda: "good memory" in pane.text(), "the greeting drawn")
    before = tmux("list-buffers")
    # On a busy machine the greeting can be drawn before the app takes keys: a Ctrl+Up sent then is lost
    # and the `c` lands in the composer. Then it is taken back and the keys sent again (bounded).
    for attempt in range(4):
        tmux("send-keys", "-t", pane.name, "C-Up")
        tmux("send-keys", "-t", pane.name, "c")
        try:
            await pane.until(lambda: "Copied Suzune's message" in pane.text(), "the notice of the copy",
                             timeout=60.0 if attempt == 3 else 15.0)
            break
        except AssertionError:
            if attempt == 3:
                raise
            tmux("send-keys", "-t", pane.name, "Escape")
            tmux("send-keys", "-t", pane.name, "BSpace")
    await pane.until(lambda: tmux("list-buffers") != before, "a tmux buffer from OSC 52")
    assert "I just have a good memory." in tmux("show-buffer")
