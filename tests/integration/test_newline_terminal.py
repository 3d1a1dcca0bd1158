"""Writing several lines in a real terminal (tmux): the newline key /help names
for this terminal inserts a line break in the message box, and the transcript
shows what was written as written: three lines stay three lines, a reply's
single newlines stay line breaks, backslashes and <...> are kept, *emphasis*
styles its words."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from tests.fakeservers import address, chat_reply, http_server
from tests.integration.test_real_terminal import terminal  # noqa: F401  (the fixture)
from tests.tmux import tmux

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")
TMUX_KEYS = {"Ctrl+J": "C-j", "Alt+Enter": "M-Enter", "Shift+Enter": "S-Enter"}
BORDERS = re.compile(r"[│╭╮╰╯─▏▕█▌▐┃]")


def lines(screen: str) -> list[str]:
    return [" ".join(BORDERS.sub(" ", line).split()) for line in screen.splitlines()]


async def test_the_newline_key_help_names_in_tmux_writes_three_lines_and_they_show(omoide_home: Path, terminal) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    poem = "Roses are red,\nviolets are blue,\nsugar is sweet."
    with http_server({"POST /v1/chat/completions": chat_reply(poem)}) as server:
        pane = terminal(["chat", "suzune"], {"OMOIDE_BASE_URL": address(server) + "/v1", "OMOIDE_MODEL": "m",
                                             "OMOIDE_DISCOVER_SERVERS": "[]", "TERM": "xterm-256color"})
        await pane.until(lambda: "Message Suzune" in pane.text(), "the composer appearing")
        tmux("send-keys", "-t", pane.name, "-l", "/help")
        tmux("send-keys", "-t", pane.name, "Enter")
        await pane.until(lambda: "Commands" in pane.text(), "the help opening")
        named = None
        for _ in range(200):  # a line at a time, until the newline key's row is whole on screen
            said = " ".join(" ".join(lines(pane.text())).split())
            named = re.search(r"In tmux \(here\) use ([A-Za-z+]+):.*?there and sends?", said)
            if named:
                break
            before = pane.text()
            tmux("send-keys", "-t", pane.name, "Down")
            await pane.until(lambda: pane.text() != before, "the help scrolling", timeout=10)
        assert named, said
        assert "Alt+Enter reach" in said or "Alt+Enter reaches" in said  # what does not work here is said too
        key = TMUX_KEYS[named.group(1)]
        tmux("send-keys", "-t", pane.name, "Escape")
        await pane.until(lambda: "Commands" not in pane.text(), "the help closing")
        for i, line in enumerate(["first line", "second line", "third line"]):
            if i:
                tmux("send-keys", "-t", pane.name, key)
            tmux("send-keys", "-t", pane.name, "-l", line)
        tmux("send-keys", "-t", pane.name, "Enter")
        await pane.until(lambda: "sugar is sweet." in pane.text(), "the reply arriving")
        shown = [line for line in lines(pane.text()) if line]
        first = shown.index("first line")
        assert shown[first:first + 3] == ["first line", "second line", "third line"]
        reply = shown.index("Roses are red,")
        assert shown[reply:reply + 3] == ["Roses are red,", "violets are blue,", "sugar is sweet."]

        tmux("send-keys", "-t", pane.name, "-l", "a\\b <c> *d*")
        tmux("send-keys", "-t", pane.name, "Enter")
        await pane.until(lambda: "a\\b <c> d" in lines(pane.text()), "the message drawn as written")
        styled = tmux("capture-pane", "-p", "-e", "-t", pane.name)
        row = next(line for line in styled.splitlines() if "a\\b <c> " in line and "*" not in line)
        assert re.search(r"\x1b\[(?:[0-9;]*;)?3(?:;[0-9;]*)?md", row), repr(row)  # the d in italics, its asterisks gone
        tmux("send-keys", "-t", pane.name, "C-q")
        await pane.until(lambda: "EXITED 0" in pane.text(), "the app quitting")
