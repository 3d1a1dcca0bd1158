"""The `omoide` command's entry point: the garbage collector is held
(`omoide.startup`) while the command's modules load, and for `omoide chat`
until the chat's first screen is drawn. For `omoide chat` the keys typed
meanwhile are held for the composer (`omoide.startup`)."""

from __future__ import annotations

import sys

from omoide.startup import hold_gc, hold_keys, release_gc, release_keys


def main() -> None:
    hold_gc()
    if sys.argv[1:2] == ["chat"]:
        hold_keys()
    try:
        from omoide.cli.app import main as cli_main, only_chat

        if not only_chat():
            release_gc()
        cli_main()
    finally:
        release_keys()
        release_gc()
