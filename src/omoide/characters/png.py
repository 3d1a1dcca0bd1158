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


MAX_TEXT_BYTES = 64 * 1024 * 1024
"""A compressed text chunk may not inflate past this (a zip bomb stays small on disk)."""


def _inflate(data: bytes) -> bytes:
    inflater = zlib.decompressobj()
    out = inflater.decompress(data, MAX_TEXT_BYTES)
    if inflater.unconsumed_tail:
        raise PNGError("a compressed text chunk inflates past the size limit")
    return out


def text_chunks(chunks: list[Chunk]) -> dict[str, str]:
    """tEXt, zTXt and iTXt chunks by keyword. Unreadable ones are skipped:
    a card reader only cares about its own keywords."""
    found: dict[str, str] = {}
    for chunk in chunks:
        if chunk.kind not in (b"tEXt", b"zTXt", b"iTXt"):
            continue
        keyword, _, rest = chunk.data.partition(b"\x00")
        try:
            if chunk.kind == b"tEXt":
                found[keyword.decode("latin-1")] = rest.decode("latin-1")
            elif chunk.kind == b"zTXt":
                found[keyword.decode("latin-1")] = _inflate(rest[1:]).decode("latin-1")
            else:
                compressed, rest = rest[0], rest[2:]  # flag, method, then language and translated keyword
                _language, _, rest = rest.partition(b"\x00")
                _translated, _, body = rest.partition(b"\x00")
                found[keyword.decode("latin-1")] = (_inflate(body) if compressed else body).decode("utf-8")
        except (zlib.error, UnicodeDecodeError, IndexError, PNGError):
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
