"""Peak resident memory of the TUI opening the character picker over characters
whose portraits are ~40-megapixel PNGs (a mostly uniform picture compresses
to about 100 KB), each highlighted in turn until its portrait is drawn.

    python benchmarks/portraits.py [--count 12] [--max-mib 300]

Runs the real app headless (Textual's run_test) in a fresh process with its
own OMOIDE_HOME; prints the resident memory before the picker, its peak
(VmHWM) and what is left after. With --max-mib, exits 1 when the peak is over.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

WIDTH, HEIGHT = 7300, 5466
"""39.9 megapixels, under the portrait's bound of 40."""


def status(field: str) -> int:
    """A /proc/self/status figure in KiB."""
    line = next(line for line in open("/proc/self/status") if line.startswith(field + ":"))
    return int(line.split()[1])


def make_characters(folder: Path, count: int) -> list[str]:
    from PIL import Image

    names = []
    for i in range(count):
        name = f"Painter{i:02d}"
        home = folder / name.lower()
        home.mkdir(parents=True)
        (home / "character.toml").write_text(f'name = "{name}"\n')
        image = Image.new("RGB", (WIDTH, HEIGHT), (200 - 10 * i, 120, 40 + 10 * i))
        image.paste((20, 60, 200), (0, HEIGHT // 3, WIDTH, HEIGHT))
        image.save(home / "card.png")
        names.append(name.lower())
    return names


async def measure(count: int) -> tuple[int, int, int, int]:
    from omoide import locations
    from omoide.characters.model import Character
    from omoide.chat.session import ChatSession
    from omoide.config.settings import Settings
    from omoide.store import Store
    from omoide.tui.app import OmoideApp
    from omoide.tui.screens.characters import CharacterPicker
    from omoide.tui.widgets.portrait import Portrait
    from tests.scripted import ScriptedBackend

    # Made in another process: making a 40-megapixel picture takes memory this one must not count.
    import subprocess

    subprocess.run([sys.executable, __file__, "--make", str(locations.user_characters_dir()), "--count", str(count)],
                   check=True)
    ids = [f"painter{i:02d}" for i in range(count)]
    size = (ids and (locations.user_characters_dir() / ids[0] / "card.png").stat().st_size) or 0
    store = await Store.open()
    session = await ChatSession.open(store, Character(id="mika", name="Mika", first_message="Hello."),
                                     Settings(user_name="Kai", welcomed=True), ScriptedBackend())
    app = OmoideApp(session)
    async with app.run_test(size=(100, 36)) as pilot:
        await pilot.press("ctrl+t")
        while not isinstance(app.screen, CharacterPicker):
            await pilot.pause(0.05)
        picker = app.screen
        before = status("VmRSS")
        portrait = picker.query_one(Portrait)
        listed = [c.id for c in picker.characters]
        for character in ids:
            picker.query_one("OptionList").highlighted = listed.index(character)  # type: ignore[attr-defined]
            deadline = time.monotonic() + 120
            while not (portrait.display and portrait.path is not None and portrait.path.parent.name == character
                       and "▀" in str(portrait.render())):
                if time.monotonic() > deadline:
                    raise SystemExit(f"the portrait of {character} was not drawn in 120 s")
                await pilot.pause(0.05)
        after = status("VmRSS")
    await store.close()
    return before, status("VmHWM"), after, size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=12)
    parser.add_argument("--max-mib", type=float, default=None)
    parser.add_argument("--make", type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.make is not None:
        make_characters(args.make, args.count)
        return
    if not Path("/proc/self/status").exists():
        raise SystemExit("needs /proc (Linux)")
    with tempfile.TemporaryDirectory() as home:
        os.environ.update({"OMOIDE_HOME": home, "OMOIDE_WELCOMED": "true", "OMOIDE_DISCOVER_SERVERS": "[]"})
        before, peak, after, size = asyncio.run(measure(args.count))
    print(f"{args.count} portraits of {WIDTH}x{HEIGHT} pixels ({size / 1024:.0f} KiB each): resident "
          f"{before / 1024:.0f} MiB with the picker open, peak {peak / 1024:.0f} MiB, {after / 1024:.0f} MiB after")
    if args.max_mib is not None and peak / 1024 > args.max_mib:
        sys.exit(1)


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    main()
