"""Open `omoide chat` on suzune headless (Textual's `run_test`) and print one line:

    opened PAINT TOP RSS WIDGETS

PAINT is seconds from this process's first line to the first painted screen;
with `--top`, TOP is the time to jump to the start of the chat (Ctrl+Home),
else -1; RSS is peak resident memory in MiB; WIDGETS the mounted messages.
`startup.py` and `long_chats.py` run it in a fresh process and time around it.
"""

import time

T0 = time.perf_counter()

import asyncio  # noqa: E402
import resource  # noqa: E402
import sys  # noqa: E402

from omoide.chat.runtime import Runtime  # noqa: E402


async def main(jump_to_top: bool) -> None:
    runtime = await Runtime.start()
    session = await runtime.session(runtime.character("suzune"))
    from omoide.tui.app import OmoideApp

    app = OmoideApp(session)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        painted = time.perf_counter() - T0
        top = -1.0
        if jump_to_top:
            t1 = time.perf_counter()
            await pilot.press("ctrl+home")
            await pilot.pause()
            top = time.perf_counter() - t1
            assert app.transcript.views()[0].message.parent_id is None
        widgets = len(app.transcript.views())
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"opened {painted:.4f} {top:.4f} {rss:.1f} {widgets}", flush=True)
    await runtime.aclose()


if __name__ == "__main__":
    asyncio.run(main("--top" in sys.argv[1:]))
