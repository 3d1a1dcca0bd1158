"""A character's portrait, drawn in half-blocks: each cell is two pixels, the
upper one the foreground of '▀', the lower its background, so it shows in any
terminal with colour (no graphics protocol needed).

Decoding is off the UI thread (a worker runs it in a thread) and done once per
file and size: the drawing is cached by path, modification time and size, and
the cache keeps the last CACHED drawings (each a few hundred styled cells).
Pillow is imported there, on first use, so a chat that shows no portrait never
loads it. A file that cannot be read leaves the widget empty (it is hidden),
and the log says why; nothing else changes.

Memory: a card's image can be a 40-megapixel PNG in a 116 KB file. It is
decoded one at a time (a lock: scrolling the picker starts a thread per
character), shrunk by whole factors at once (`draft` for a JPEG, `reduce` for
the rest) before it is converted, and the images above MAX_PIXELS are refused
unread. glibc keeps freed blocks of the size Pillow allocates in the arena of
the thread that freed them, so twelve decodes left gigabytes resident; on
glibc the threshold above which a block is mapped (and unmapped when freed) is
fixed at MMAP_THRESHOLD, so each decode's memory is given back when it ends.
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import logging
import threading
from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING

from rich.style import Style
from rich.text import Text
from textual.widgets import Static

if TYPE_CHECKING:
    from PIL import Image

log = logging.getLogger(__name__)

_drawn: OrderedDict[tuple[str, int, int, int], Text | None] = OrderedDict()
"""(path, mtime_ns, width, height) -> the drawing (None: the file could not be read), newest last."""
CACHED = 256
"""Drawings kept: a picker's worth of characters several times over."""
MAX_PIXELS = 40_000_000
"""A larger image is refused before it is decoded (a card is well under a megapixel)."""
MMAP_THRESHOLD = 1 << 20
"""Bytes from which glibc maps a block of its own (given back when freed)."""
_decoding = threading.Lock()
_malloc_fixed: list[bool] = []


def _give_memory_back() -> None:
    """Fix glibc's mmap threshold (once): its default grows to 32 MB after the first
    big free, and Pillow's 16 MB blocks then stay in the arenas for good."""
    if _malloc_fixed:
        return
    _malloc_fixed.append(True)
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name) if name else None
        mallopt = getattr(libc, "mallopt", None)
        if mallopt is not None:
            mallopt(-3, MMAP_THRESHOLD)  # M_MMAP_THRESHOLD
    except OSError:
        pass  # not glibc: its allocator is its own


def half_blocks(path: Path, width: int, height: int) -> Text | None:
    """The image at `path` fitted into `width` x `height` cells (aspect kept,
    centred), or None when it cannot be read. Slow: call it in a thread."""
    try:
        key = (str(path), path.stat().st_mtime_ns, width, height)
    except OSError:
        return None
    if key in _drawn:
        _drawn.move_to_end(key)
        return _drawn[key]
    with _decoding:
        drawing = _drawn[key] if key in _drawn else _draw(path, width, height)
    _drawn[key] = drawing
    while len(_drawn) > CACHED:
        _drawn.popitem(last=False)
    return drawing


def cached(path: Path, width: int, height: int) -> tuple[bool, Text | None]:
    """(True, the drawing) when `path` at this size was drawn before; (False, None) if not."""
    try:
        key = (str(path), path.stat().st_mtime_ns, width, height)
    except OSError:
        return True, None
    return (True, _drawn[key]) if key in _drawn else (False, None)


def _draw(path: Path, width: int, height: int) -> Text | None:
    from PIL import Image, UnidentifiedImageError

    _give_memory_back()
    size = (width, height * 2)
    try:
        with Image.open(path) as image:
            if image.width * image.height > MAX_PIXELS:
                log.warning("portrait %s is %dx%d pixels: too large to draw", path, image.width, image.height)
                return None
            image.draft("RGB", size)  # a JPEG decodes at 1/2, 1/4 or 1/8 of its size
            picture = _shrunk(image, size).convert("RGBA")
    except (OSError, UnidentifiedImageError, ValueError, Image.DecompressionBombError) as exc:
        log.warning("portrait %s cannot be read: %s", path, exc)
        return None
    picture.thumbnail((width, height * 2), Image.Resampling.LANCZOS)
    canvas = Image.new("RGBA", (width, height * 2), (0, 0, 0, 0))
    canvas.paste(picture, ((width - picture.width) // 2, (height * 2 - picture.height) // 2))
    pixels = canvas.load()
    assert pixels is not None
    text = Text(no_wrap=True, overflow="crop")
    for row in range(height):
        for column in range(width):
            upper, lower = pixels[column, row * 2], pixels[column, row * 2 + 1]
            text.append("▀", _style(upper, lower))
        if row < height - 1:
            text.append("\n")
    return text


def _shrunk(image: Image.Image, size: tuple[int, int]) -> Image.Image:
    """`image` reduced by the largest whole factor that keeps it at least twice `size`
    (the thumbnail's filter then has pixels to work with), before any conversion."""
    factor = min(image.width // (size[0] * 2), image.height // (size[1] * 2))
    if image.mode not in ("L", "LA", "RGB", "RGBA", "I", "F"):
        image = image.convert("RGBA")  # a palette image: reduce needs its colours
    return image.reduce(factor) if factor > 1 else image


def _style(upper: object, lower: object) -> Style:
    """'▀' in the upper pixel's colour on the lower one's; a transparent pixel keeps the background."""
    def colour(pixel: object) -> str | None:
        assert isinstance(pixel, tuple)
        red, green, blue, alpha = pixel
        return f"#{red:02x}{green:02x}{blue:02x}" if alpha >= 128 else None

    return Style(color=colour(upper) or "default", bgcolor=colour(lower))


class Portrait(Static):
    """A portrait of `width` x `height` cells; `show(path)` draws one (None hides it)."""

    DEFAULT_CSS = """
    Portrait { width: auto; height: auto; }
    """

    def __init__(self, width: int, height: int, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__("", id=id, classes=classes)
        self.cells = (width, height)
        self.path: Path | None = None
        self.display = False

    def show(self, path: Path | None) -> None:
        """Draw the portrait at `path` (decoded in a thread, once); None hides it."""
        self.path = path
        if path is None:
            self.display = False
            return
        found, drawing = cached(path, *self.cells)
        if found:  # drawn before (a scene's speaker on every reply): no thread needed
            self._put(drawing)
            return
        self.run_worker(self._draw(path), group="portrait", exclusive=True, exit_on_error=False)

    async def _draw(self, path: Path) -> None:
        drawing = await asyncio.to_thread(half_blocks, path, *self.cells)
        if self.path == path:  # else another character was highlighted meanwhile
            self._put(drawing)

    def _put(self, drawing: Text | None) -> None:
        if drawing is None:
            self.display = False
            return
        self.update(drawing)
        self.display = True
