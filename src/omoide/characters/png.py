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


def text_chunks(chunks: list[Chunk]) -> dict[str, str]:
    """tEXt (and uncompressed iTXt / zTXt) chunks by keyword."""
    found: dict[str, str] = {}
    for chunk in chunks:
        try:
            if chunk.kind == b"tEXt":
                keyword, _, text = chunk.data.partition(b"\x00")
                found[keyword.decode("latin-1")] = text.decode("latin-1")
            elif chunk.kind == b"zTXt":
                keyword, _, rest = chunk.data.partition(b"\x00")
                found[keyword.decode("latin-1")] = zlib.decompress(rest[1:]).decode("latin-1")
            elif chunk.kind == b"iTXt":
                keyword, _, rest = chunk.data.partition(b"\x00")
                compressed, _method, rest = rest[0], rest[1], rest[2:]
                _lang, _, rest = rest.partition(b"\x00")
                _translated, _, text = rest.partition(b"\x00")
                found[keyword.decode("latin-1")] = (zlib.decompress(text) if compressed else text).decode("utf-8")
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
