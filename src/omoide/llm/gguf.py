"""What omoide needs to know about a GGUF model file before llama.cpp loads it.

A small reader of the file's header (GGUF v2 and v3, little-endian): the
architecture, the context the model was trained with, its chat template, and
its BOS token. It reads the metadata only, never the tensors, and every count
and length it reads is checked against a bound and against the file's size, so
a damaged or hostile file is refused with a message instead of reading far or
allocating much. Array values (the vocabulary, hundreds of thousands of
strings) are skipped, not kept.
"""

from __future__ import annotations

import mmap
import struct
from dataclasses import dataclass
from pathlib import Path

from omoide.errors import LocalModelMissing

MAGIC = b"GGUF"
MAX_ENTRIES = 65_536
"""Metadata entries a header may hold (real models have 20-60)."""
MAX_STRING = 4 * 1024 * 1024
"""Bytes of one string value: chat templates run to tens of kilobytes."""
MAX_ARRAY = 16 * 1024 * 1024
"""Items of one array (vocabularies are up to a few hundred thousand)."""

# GGUF value types: fixed sizes, then STRING (8) and ARRAY (9).
_FIXED = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
_STRING, _ARRAY = 8, 9
_UNPACK = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}


@dataclass(frozen=True, slots=True)
class ModelInfo:
    architecture: str
    """`general.architecture`: "llama", "gemma3", "qwen2" ..."""
    context_length: int | None
    """The context it was trained with (`<architecture>.context_length`)."""
    chat_template: str
    """`tokenizer.chat_template`, or "" for a file without one."""
    add_bos: bool
    """Whether the model's prompts start with its BOS token (`tokenizer.ggml.add_bos_token`)."""
    name: str = ""


class _Header:
    def __init__(self, data: mmap.mmap | bytes, path: Path) -> None:
        self.data = data
        self.at = 0
        self.path = path

    def bad(self, why: str) -> LocalModelMissing:
        return LocalModelMissing(
            f"{self.path} is not a GGUF model llama.cpp can load: {why}.",
            "Download it again (`omoide models pull` checks what it fetches), or pick another file.",
        )

    def take(self, size: int) -> bytes:
        if size < 0 or self.at + size > len(self.data):
            raise self.bad("its header runs past the end of the file")
        chunk = self.data[self.at:self.at + size]
        self.at += size
        return bytes(chunk)

    def skip(self, size: int) -> None:
        if self.at + size > len(self.data):
            raise self.bad("its header runs past the end of the file")
        self.at += size

    def skip_strings(self, count: int) -> None:
        """Step over `count` strings without copying them (a vocabulary is most of a header)."""
        data, at, end = self.data, self.at, len(self.data)
        length = struct.Struct("<Q")
        for _ in range(count):
            if at + 8 > end:
                raise self.bad("its header runs past the end of the file")
            size = length.unpack_from(data, at)[0]
            if size > MAX_STRING:
                raise self.bad(f"it claims {size:,} bytes in one string (at most {MAX_STRING:,} are read)")
            at += 8 + size
        if at > end:
            raise self.bad("its header runs past the end of the file")
        self.at = at

    def number(self, fmt: str) -> int | float | bool:
        value: int | float | bool = struct.unpack(fmt, self.take(struct.calcsize(fmt)))[0]
        return value

    def count(self, limit: int, what: str) -> int:
        value = int(self.number("<Q"))
        if value > limit:
            raise self.bad(f"it claims {value:,} {what} (at most {limit:,} are read)")
        return value

    def string(self) -> str:
        return self.take(self.count(MAX_STRING, "bytes in one string")).decode("utf-8", errors="replace")

    def value(self, kind: int) -> object:
        """One value; arrays are skipped (None)."""
        if kind in _UNPACK:
            return self.number(_UNPACK[kind])
        if kind == _STRING:
            return self.string()
        if kind == _ARRAY:
            item = int(self.number("<I"))
            length = self.count(MAX_ARRAY, "items in one array")
            if item in _FIXED:
                self.skip(_FIXED[item] * length)
            elif item == _STRING:
                self.skip_strings(length)
            else:
                raise self.bad(f"an array holds values of unknown type {item}")
            return None
        raise self.bad(f"a value has unknown type {kind}")


def read_model_info(path: Path) -> ModelInfo:
    """The header facts of the GGUF file at `path`; LocalModelMissing if it is not one."""
    try:
        with path.open("rb") as file:
            size = path.stat().st_size
            if size < 24:
                raise _Header(b"", path).bad("it is too short")
            with mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as data:
                return _parse(_Header(data, path))
    except OSError as exc:
        raise LocalModelMissing(f"Could not read the model file {path}: {exc.strerror or exc}.",
                                "Check that the file exists and can be read.") from exc


def _parse(header: _Header) -> ModelInfo:
    if header.take(4) != MAGIC:
        raise header.bad("it does not start with GGUF's magic number")
    version = int(header.number("<I"))
    if version not in (2, 3):
        raise header.bad(f"it is GGUF version {version} (omoide reads versions 2 and 3)")
    header.count(1 << 32, "tensors")
    entries = header.count(MAX_ENTRIES, "metadata entries")
    wanted: dict[str, object] = {}
    for _ in range(entries):
        key = header.take(header.count(65_536, "bytes in a key")).decode("utf-8", errors="replace")
        value = header.value(int(header.number("<I")))
        if key.startswith(("general.", "tokenizer.chat_template", "tokenizer.ggml.add_bos_token")) or key.endswith(".context_length"):
            wanted[key] = value
    architecture = str(wanted.get("general.architecture") or "")
    context = wanted.get(f"{architecture}.context_length")
    return ModelInfo(
        architecture=architecture,
        context_length=int(context) if isinstance(context, int) and context > 0 else None,
        chat_template=str(wanted.get("tokenizer.chat_template") or ""),
        add_bos=wanted.get("tokenizer.ggml.add_bos_token") is True,
        name=str(wanted.get("general.name") or ""),
    )
