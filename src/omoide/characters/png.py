"""Reading and writing PNG text chunks, where character cards live.

Only the container is touched: chunks are read with their CRCs checked, and
written back in order with card chunks replaced, so the image itself is kept
byte for byte.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass

SIGNATURE = b"\x89PNG\r\n\x1a\n"


class PNGError(ValueError):
    pass


@dataclass(frozen=True, slots=True)
class Chunk:
    kind: bytes
    data: bytes


def read_chunks(data: bytes) -> list[Chunk]:
    if not data.startswith(SIGNATURE):
        raise PNGError("it is not a PNG file (bad signature)")
    chunks: list[Chunk] = []
    pos = len(SIGNATURE)
    while pos < len(data):
        if pos + 8 > len(data):
            raise PNGError("the file is truncated (a chunk header is cut off)")
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind = data[pos + 4 : pos + 8]
        end = pos + 8 + length
        if end + 4 > len(data):
            raise PNGError(f"the file is truncated (the {kind.decode('latin-1', 'replace')} chunk is cut off)")
        body = data[pos + 8 : end]
        (crc,) = struct.unpack(">I", data[end : end + 4])
        if zlib.crc32(kind + body) & 0xFFFFFFFF != crc:
            raise PNGError(f"the {kind.decode('latin-1', 'replace')} chunk is corrupt (CRC mismatch)")
        chunks.append(Chunk(kind, body))
        pos = end + 4
        if kind == b"IEND":
            break
    if not chunks or chunks[-1].kind != b"IEND":
        raise PNGError("the file is truncated (no IEND chunk)")
    return chunks


def write_chunks(chunks: list[Chunk]) -> bytes:
    out = bytearray(SIGNATURE)
    for chunk in chunks:
        out += struct.pack(">I", len(chunk.data)) + chunk.kind + chunk.data
        out += struct.pack(">I", zlib.crc32(chunk.kind + chunk.data) & 0xFFFFFFFF)
    return bytes(out)


MAX_CHUNK_TEXT = 8 * 1024 * 1024
"""A compressed text chunk may not inflate past this: a zip bomb stays small on
disk (1,000:1), and the largest real cards, lorebooks included, are a few MiB."""
MAX_TOTAL_TEXT = 16 * 1024 * 1024
"""All the compressed text chunks of one file together."""


class PNGTooLarge(PNGError):
    """A text chunk inflates past a limit: reading stops there."""


class _Budget:
    def __init__(self) -> None:
        self.left = MAX_TOTAL_TEXT

    def inflate(self, data: bytes, keyword: str) -> bytes:
        limit = min(MAX_CHUNK_TEXT, self.left)
        inflater = zlib.decompressobj()
        out = inflater.decompress(data, limit + 1)
        if len(out) > limit:
            if limit < MAX_CHUNK_TEXT:
                raise PNGTooLarge(f"its compressed text chunks inflate past {MAX_TOTAL_TEXT // 1_048_576} MiB in all "
                                  f"(stopped at the '{keyword}' chunk)")
            raise PNGTooLarge(f"its compressed '{keyword}' text chunk inflates past {MAX_CHUNK_TEXT // 1_048_576} MiB")
        self.left -= len(out)
        return out


def text_chunks(chunks: list[Chunk]) -> dict[str, str]:
    """tEXt, zTXt and iTXt chunks by keyword. Unreadable ones are skipped (a
    card reader only cares about its own keywords), but a chunk that inflates
    past a limit stops the reading with PNGTooLarge."""
    found: dict[str, str] = {}
    budget = _Budget()
    for chunk in chunks:
        if chunk.kind not in (b"tEXt", b"zTXt", b"iTXt"):
            continue
        keyword_bytes, _, rest = chunk.data.partition(b"\x00")
        keyword = keyword_bytes.decode("latin-1")
        try:
            if chunk.kind == b"tEXt":
                found[keyword] = rest.decode("latin-1")
            elif chunk.kind == b"zTXt":
                found[keyword] = budget.inflate(rest[1:], keyword).decode("latin-1")
            else:
                compressed, rest = rest[0], rest[2:]  # flag, method, then language and translated keyword
                _language, _, rest = rest.partition(b"\x00")
                _translated, _, body = rest.partition(b"\x00")
                found[keyword] = (budget.inflate(body, keyword) if compressed else body).decode("utf-8")
        except (zlib.error, UnicodeDecodeError, IndexError):
            continue
    return found


def replace_text_chunks(chunks: list[Chunk], texts: dict[str, str]) -> list[Chunk]:
    """Drop text chunks with these keywords, add the new ones just before IEND."""
    keywords = {k.encode("latin-1") for k in texts}
    kept = [c for c in chunks if not (c.kind in (b"tEXt", b"zTXt", b"iTXt") and c.data.partition(b"\x00")[0] in keywords)]
    new = [Chunk(b"tEXt", k.encode("latin-1") + b"\x00" + v.encode("latin-1")) for k, v in texts.items()]
    return kept[:-1] + new + kept[-1:]


def blank_png(width: int = 64, height: int = 64, rgb: tuple[int, int, int] = (46, 52, 64)) -> bytes:
    """A small plain image for a card exported from a character that has none."""
    row = b"\x00" + bytes(rgb) * width
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return write_chunks([
        Chunk(b"IHDR", header),
        Chunk(b"IDAT", zlib.compress(row * height, 9)),
        Chunk(b"IEND", b""),
    ])
