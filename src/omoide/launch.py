"""The `omoide` command's entry point: the garbage collector is held
(`omoide.startup`) while the command's modules load, and for `omoide chat`
until the chat's first screen is drawn."""

from __future__ import annotations

from omoide.startup import hold_gc, release_gc


def main() -> None:
    hold_gc()
    try:
        from omoide.cli.app import main as cli_main, only_chat

        if not only_chat():
            release_gc()
        cli_main()
    finally:
        release_gc()
