"""`omoide models pull`: fetch a GGUF file into the data directory.

The file is written to NAME.gguf.part and renamed only once it is whole and
checked, so a half-downloaded model is never offered. An interrupted download
resumes from the .part file with an HTTP Range request. The size is checked
against what the server announced, and the SHA-256 against the one given on
the command line or, from Hugging Face, the `X-Linked-Etag` of the file. The
first bytes must be GGUF's magic number, so an HTML error page or a
safetensors file is refused at once.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit

import httpx

from omoide.errors import DownloadFailed
from omoide.models.catalog import RECOMMENDED, models_dir

GGUF_MAGIC = b"GGUF"
CHUNK = 1 << 20
_SHA256 = re.compile(r"^[0-9a-f]{64}$")

Progress = Callable[[int, int | None], None]
"""Called with (bytes on disk, total bytes or None) as the download goes."""


@dataclass(frozen=True, slots=True)
class PullTarget:
    url: str
    filename: str


def hf_endpoint() -> str:
    """Hugging Face's address; HF_ENDPOINT moves it (a mirror, or a test server)."""
    return os.environ.get("HF_ENDPOINT", "https://huggingface.co").rstrip("/")


def resolve(source: str) -> PullTarget:
    """A recommended model's name, a URL, or REPO/FILE.gguf on Hugging Face."""
    source = source.strip()
    for model in RECOMMENDED:
        if source.lower() == model.name:
            source = model.source
            break
    if source.startswith(("http://", "https://")):
        name = unquote(urlsplit(source).path.rsplit("/", 1)[-1])
        return PullTarget(source, _safe_name(name or "model.gguf"))
    parts = source.split("/")
    if len(parts) >= 3 and all(parts) and parts[-1].lower().endswith(".gguf"):
        repo, file = "/".join(parts[:2]), "/".join(parts[2:])
        return PullTarget(f"{hf_endpoint()}/{repo}/resolve/main/{file}", _safe_name(parts[-1]))
    names = ", ".join(m.name for m in RECOMMENDED)
    raise DownloadFailed(
        f"'{source}' is neither a recommended model, a URL, nor a Hugging Face REPO/FILE.gguf.",
        f"For example `omoide models pull bartowski/Llama-3.2-3B-Instruct-GGUF/Llama-3.2-3B-Instruct-Q4_K_M.gguf`; recommended: {names}.",
    )


def _safe_name(name: str) -> str:
    name = re.sub(r"[^A-Za-z0-9._+-]", "_", name).lstrip(".")
    return name if name.lower().endswith(".gguf") else name + ".gguf"


def _announced(responses: list[httpx.Response]) -> tuple[str | None, int | None]:
    """SHA-256 and size as Hugging Face announces them (on the redirect, for LFS files)."""
    sha: str | None = None
    size: int | None = None
    for response in responses:
        etag = response.headers.get("x-linked-etag", "").strip().strip('"').removeprefix("W/").strip('"').lower()
        if _SHA256.match(etag):
            sha = etag
        linked = response.headers.get("x-linked-size", "")
        if linked.isdigit():
            size = int(linked)
    return sha, size


def _total(response: httpx.Response, offset: int) -> int | None:
    if response.status_code == 206:
        match = re.match(r"bytes\s+(\d+)-\d+/(\d+)", response.headers.get("content-range", ""))
        return int(match.group(2)) if match and int(match.group(1)) == offset else None
    length = response.headers.get("content-length", "")
    return int(length) if length.isdigit() else None


async def pull(
    source: str,
    *,
    sha256: str | None = None,
    progress: Progress | None = None,
    client: httpx.AsyncClient | None = None,
    dest_dir: Path | None = None,
) -> Path:
    """Download `source` into the models directory and return the file's path."""
    target = resolve(source)
    folder = dest_dir or models_dir()
    folder.mkdir(parents=True, exist_ok=True)
    final = folder / target.filename
    if final.exists():
        return final
    expected_sha = sha256.lower() if sha256 else None
    if expected_sha is not None and not _SHA256.match(expected_sha):
        raise DownloadFailed(f"'{sha256}' is not a SHA-256 (64 hexadecimal digits).", "Copy it again from the model's page.")
    own = client is None
    client = client or httpx.AsyncClient(timeout=httpx.Timeout(30.0, connect=10.0), follow_redirects=True)
    try:
        return await _download(client, target, final, expected_sha, progress)
    finally:
        if own:
            await client.aclose()


async def _download(
    client: httpx.AsyncClient, target: PullTarget, final: Path, expected_sha: str | None, progress: Progress | None
) -> Path:
    part = final.with_name(final.name + ".part")
    for _attempt in range(2):  # the second only after a 416: the .part was unusable
        offset = part.stat().st_size if part.exists() else 0
        headers = {"Range": f"bytes={offset}-"} if offset else {}
        try:
            async with client.stream("GET", target.url, headers=headers) as response:
                if response.status_code == 416 and offset:
                    part.unlink()
                    continue
                _refuse_status(response, target)
                announced_sha, announced_size = _announced([*response.history, response])
                resumed = response.status_code == 206
                total = _total(response, offset) if resumed else _total(response, 0)
                if not resumed:
                    offset = 0
                size = announced_size or total
                expected_sha = expected_sha or announced_sha
                _check_space(final.parent, size, offset)
                digest = hashlib.sha256()
                if offset:
                    _hash_file(part, digest)
                with part.open("ab" if offset else "wb") as out:
                    done = offset
                    head: bytes | None = None if offset else b""
                    async for chunk in response.aiter_bytes():  # as it arrives: a drop loses nothing received
                        if head is not None:
                            head += chunk
                            if len(head) >= len(GGUF_MAGIC):
                                _check_magic(head, part, target)
                                head = None
                        out.write(chunk)
                        digest.update(chunk)
                        done += len(chunk)
                        if progress is not None:
                            progress(done, size)
                if head is not None:
                    _check_magic(head, part, target)
        except httpx.HTTPError as exc:
            have = part.stat().st_size if part.exists() else 0
            raise DownloadFailed(
                f"The download of {target.filename} was interrupted after {have / 1_048_576:.1f} MiB ({type(exc).__name__}).",
                "Run the same command again: it resumes where it stopped.",
            ) from exc
        _verify(part, size, expected_sha, digest.hexdigest(), target)
        part.replace(final)
        return final
    raise DownloadFailed(f"The server refused to resume {target.filename}.", "Delete the .part file and try again.")


def _refuse_status(response: httpx.Response, target: PullTarget) -> None:
    status = response.status_code
    if status in (200, 206):
        return
    if status in (401, 403):
        raise DownloadFailed(
            f"The server refused {target.url} ({status}): the model may need a login or a licence accepted.",
            f"Download it in a browser and put it in {models_dir()}; it then shows in `omoide models`.",
        )
    if status == 404:
        raise DownloadFailed(f"There is no file at {target.url} (404).", "Check the repository and file name on the model's page.")
    raise DownloadFailed(f"The server answered {status} for {target.url}.", "Try again later.")


def _check_magic(head: bytes, part: Path, target: PullTarget) -> None:
    if head[: len(GGUF_MAGIC)] != GGUF_MAGIC:
        part.unlink(missing_ok=True)
        raise DownloadFailed(
            f"{target.url} is not a GGUF file (it starts with {head[:8]!r}), so llama.cpp could not load it.",
            "Pick the .gguf file on the model's page (not the safetensors, nor the page itself).",
        )


def _check_space(folder: Path, size: int | None, offset: int) -> None:
    if size is None:
        return
    free = shutil.disk_usage(folder).free
    if size - offset > free:
        raise DownloadFailed(
            f"The model needs {(size - offset) / 1_048_576:.0f} MiB more but {folder} has {free / 1_048_576:.0f} MiB free.",
            "Free some space, or set OMOIDE_HOME to a disk with more room.",
        )


def _hash_file(path: Path, digest: hashlib._Hash) -> None:
    with path.open("rb") as f:
        while block := f.read(CHUNK):
            digest.update(block)


def _verify(part: Path, size: int | None, expected_sha: str | None, actual_sha: str, target: PullTarget) -> None:
    have = part.stat().st_size
    if size is not None and have < size:
        raise DownloadFailed(
            f"The download of {target.filename} stopped at {have:,} of {size:,} bytes.",
            "Run the same command again: it resumes where it stopped.",
        )
    if size is not None and have > size:
        part.unlink()
        raise DownloadFailed(f"{target.filename} came out larger than announced ({have:,} > {size:,} bytes) and was deleted.", "Try again.")
    if expected_sha is not None and actual_sha != expected_sha:
        part.unlink()
        raise DownloadFailed(
            f"{target.filename} does not match its SHA-256 (expected {expected_sha[:12]}…, got {actual_sha[:12]}…) and was deleted.",
            "Try again; if it happens again, the file on the server is not the one you expect.",
        )
