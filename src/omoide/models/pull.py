"""`omoide models pull`: fetch a GGUF file into the data directory.

The file is written to NAME.gguf.part and renamed only once it is whole and
checked, so a half-downloaded model is never offered. An interrupted download
resumes from the .part file with an HTTP Range request. The size is checked
against what the server announced, and the SHA-256 against the one given on
the command line or, from Hugging Face, the `X-Linked-Etag` of the file. The
first bytes must be GGUF's magic number, so an HTML error page or a
safetensors file is refused at once.

Bounded: a resume is kept only when the server's Content-Range starts where
the .part ends (otherwise the download starts over); no more is written than
the size announced, or, when none is, than `unannounced_limit`; a full disk
is a message. The .part is kept when the download is cut off or the disk
fills (the same command resumes it), and removed when its bytes are known to
be wrong (not GGUF, more than announced, a checksum that does not match).
"""

from __future__ import annotations

import asyncio
import errno
import hashlib
import logging
import os
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit

import httpx

from omoide import locations
from omoide.errors import DownloadFailed
from omoide.models.catalog import RECOMMENDED, models_dir

log = logging.getLogger(__name__)

GGUF_MAGIC = b"GGUF"
CHUNK = 1 << 20
MAX_UNANNOUNCED = 64 * 1024**3
"""The most a download of unannounced size may write (the largest GGUF one would chat with here is far smaller)."""
KEEP_FREE = 512 * 1024**2
"""A download of unannounced size stops before the disk has less than this free."""
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


def _content_range(response: httpx.Response) -> tuple[int, int | None] | None:
    """(first byte, total or None) of a 206 answer's Content-Range; None if it has none that parses."""
    match = re.match(r"bytes\s+(\d+)-\d+/(\d+|\*)", response.headers.get("content-range", ""))
    if match is None:
        return None
    return int(match.group(1)), int(match.group(2)) if match.group(2).isdigit() else None


def _length(response: httpx.Response) -> int | None:
    length = response.headers.get("content-length", "")
    return int(length) if length.isdigit() else None


def unannounced_limit(folder: Path) -> int:
    """The most a download whose size nobody announced may write: MAX_UNANNOUNCED,
    and never so much that less than KEEP_FREE stays free on the disk."""
    return max(0, min(MAX_UNANNOUNCED, shutil.disk_usage(folder).free - KEEP_FREE))


async def pull(
    source: str,
    *,
    sha256: str | None = None,
    progress: Progress | None = None,
    client: httpx.AsyncClient | None = None,
    dest_dir: Path | None = None,
    limit: int | None = None,
    deadline: float | None = None,
) -> Path:
    """Download `source` into the models directory and return the file's path.
    `limit` caps a download whose size the server does not announce (default:
    `unannounced_limit`); `deadline` is the most seconds the whole download may
    take (default: none), so a server that drips bytes cannot hold it forever."""
    target = resolve(source)
    folder = dest_dir or models_dir()
    locations.private_dir(folder)
    if dest_dir is None:
        locations.tighten(folder)
    final = folder / target.filename
    if final.exists():
        return final
    expected_sha = sha256.lower() if sha256 else None
    if expected_sha is not None and not _SHA256.match(expected_sha):
        raise DownloadFailed(f"'{sha256}' is not a SHA-256 (64 hexadecimal digits).", "Copy it again from the model's page.")
    own = client is None
    client = client or httpx.AsyncClient(timeout=httpx.Timeout(30.0, connect=10.0), follow_redirects=True)
    try:
        async with asyncio.timeout(deadline):
            return await _download(client, target, final, expected_sha, progress, limit)
    except TimeoutError as exc:
        part = final.with_name(final.name + ".part")
        have = part.stat().st_size if part.exists() else 0
        raise DownloadFailed(
            f"The download of {target.filename} did not finish within {_duration(deadline or 0)}: "
            f"the server sent only {human_size(have)} in that time.",
            f"What arrived is kept in {part.name}: run the same command again to resume, "
            "or raise [models] pull_deadline in the config (OMOIDE_PULL_DEADLINE) for a slow connection.",
        ) from exc
    finally:
        if own:
            await client.aclose()


async def _download(
    client: httpx.AsyncClient, target: PullTarget, final: Path, expected_sha: str | None, progress: Progress | None,
    limit: int | None,
) -> Path:
    part = final.with_name(final.name + ".part")
    for _attempt in range(3):  # again only when the .part could not be resumed (416, a wrong range): from byte 0
        offset = part.stat().st_size if part.exists() else 0
        headers = {"Range": f"bytes={offset}-"} if offset else {}
        try:
            async with client.stream("GET", target.url, headers=headers) as response:
                if response.status_code == 416 and offset:
                    part.unlink()  # on purpose: the server says the .part is not a start of its file
                    continue
                _refuse_status(response, target)
                announced_sha, announced_size = _announced([*response.history, response])
                if response.status_code == 206:
                    got = _content_range(response)
                    if got is None or got[0] != offset:
                        # Not the bytes asked for: appending them would corrupt the file.
                        log.warning("%s: asked for bytes %d- and got %s; starting over",
                                    target.url, offset, response.headers.get("content-range") or "no Content-Range")
                        part.unlink()
                        continue
                    total = got[1]
                else:
                    offset = 0  # a whole file (the server ignored the range): it replaces the .part
                    total = _length(response)
                size = announced_size or total
                expected_sha = expected_sha or announced_sha
                _check_space(final.parent, size, offset)
                by_disk = size is None and limit is None  # the cap is what the disk can spare
                cap = size if size is not None else (limit if limit is not None else unannounced_limit(final.parent))
                digest = hashlib.sha256()
                if offset:
                    _hash_file(part, digest)
                await _write(response, part, offset, digest, cap, size, progress, target, by_disk)
        except httpx.TooManyRedirects as exc:
            raise DownloadFailed(f"{target.url} redirects in a loop (it never reaches a file), so nothing was downloaded.",
                                 _NO_RETRY) from exc
        except httpx.UnsupportedProtocol as exc:
            scheme = exc.request.url.scheme if exc.request is not None else "another"
            raise DownloadFailed(f"{target.url} redirects to a {scheme}:// address; omoide only follows http:// and https://, "
                                 "so nothing was downloaded.", _NO_RETRY) from exc
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            if part.exists() and part.stat().st_size:
                raise _interrupted(part, target, exc) from exc
            host = urlsplit(target.url).netloc
            raise DownloadFailed(
                f"Could not reach {host} to download {target.filename} ({type(exc).__name__}): no network, or the server is down.",
                "Run the same command again once you are online.",
            ) from exc
        except httpx.HTTPError as exc:
            raise _interrupted(part, target, exc) from exc
        _verify(part, size, expected_sha, digest.hexdigest(), target)
        part.replace(final)
        return final
    raise DownloadFailed(f"The server did not resume {target.filename} from where it stopped, twice.",
                         "Delete the .part file in the models folder and try again.")


def _interrupted(part: Path, target: PullTarget, exc: Exception) -> DownloadFailed:
    have = part.stat().st_size if part.exists() else 0
    return DownloadFailed(
        f"The download of {target.filename} was interrupted after {have / 1_048_576:.1f} MiB ({type(exc).__name__}).",
        "Run the same command again: it resumes where it stopped.",
    )


async def _write(response: httpx.Response, part: Path, offset: int, digest: hashlib._Hash, cap: int, size: int | None,
                 progress: Progress | None, target: PullTarget, by_disk: bool) -> None:
    """Append the response's body to `part` (from `offset`), checking the magic
    number first and never writing past `cap` bytes."""
    done = offset
    head: bytes | None = None if offset else b""
    try:
        flags = os.O_WRONLY | os.O_CREAT | (os.O_APPEND if offset else os.O_TRUNC)
        fd = os.open(part, flags | getattr(os, "O_BINARY", 0), locations.PRIVATE_FILE)
        with os.fdopen(fd, "ab" if offset else "wb") as out:
            if hasattr(os, "fchmod"):
                os.fchmod(fd, locations.PRIVATE_FILE)  # whatever the umask, and a .part an earlier version left open
            async for chunk in response.aiter_bytes():  # as it arrives: a drop loses nothing received
                if head is not None:
                    head += chunk
                    if len(head) >= len(GGUF_MAGIC):
                        _check_magic(head, part, target)
                        head = None
                if done + len(chunk) > cap:
                    out.close()
                    part.unlink(missing_ok=True)  # on purpose: more than announced, or than may be written
                    raise _too_big(target, cap, size, part.parent if by_disk else None)
                out.write(chunk)
                digest.update(chunk)
                done += len(chunk)
                if progress is not None:
                    progress(done, size)
    except OSError as exc:
        if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
            raise DownloadFailed(f"Cannot write {part}: {exc.strerror or exc}.", "Check the folder's permissions and free space.") from exc
        have = part.stat().st_size if part.exists() else 0
        if size is None:
            part.unlink(missing_ok=True)  # a file of unknown size: nothing to resume towards
            kept = "Nothing was kept."
        else:
            kept = f"The {human_size(have)} received are kept in {part.name} to resume."
        raise DownloadFailed(f"The disk is full: the download of {target.filename} stopped. {kept}",
                             "Free some space, or set OMOIDE_HOME to a disk with more room, then run the same command again.") from exc
    if head is not None:
        _check_magic(head, part, target)


def _too_big(target: PullTarget, cap: int, size: int | None, disk: Path | None) -> DownloadFailed:
    """`disk`: the folder whose free space set the cap, if it did."""
    if size is not None:
        return DownloadFailed(f"The server sent more of {target.filename} than the {size:,} bytes it announced; the file was deleted.",
                              "Try again; if it happens again, the server is broken.")
    if disk is not None and cap < MAX_UNANNOUNCED:
        free = shutil.disk_usage(disk).free  # as before this download began: its .part is deleted
        return DownloadFailed(
            f"The server did not say how big {target.filename} is, and {disk} has {human_size(free)} free, of which "
            f"omoide keeps {human_size(KEEP_FREE)} free: it sent more than the {human_size(cap)} that leaves; "
            "the download was stopped and deleted.",
            "Free some space or set OMOIDE_HOME to a disk with more room, and check the address: "
            "a model server should announce the file's size (Content-Length).",
        )
    return DownloadFailed(
        f"The server did not say how big {target.filename} is and sent more than {human_size(cap)}; "
        "the download was stopped and deleted.",
        "Check the address: a model server should announce the file's size (Content-Length). "
        "Free space or set OMOIDE_HOME elsewhere if the model really is that large.",
    )


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
            f"The model needs {human_size(size - offset)} more but {folder} has {human_size(free)} free.",
            "Free some space, or set OMOIDE_HOME to a disk with more room.",
        )


_NO_RETRY = "Trying again will not help: check the address, or download the file in a browser and put it in the models folder (`omoide paths`)."


def human_size(count: int) -> str:
    """Bytes as a person reads them: KiB under a MiB, MiB under a GiB, then GiB."""
    if count < 1_048_576:
        return f"{count / 1024:,.0f} KiB"
    if count < 1024**3:
        return f"{count / 1_048_576:,.1f} MiB" if count < 10 * 1_048_576 else f"{count / 1_048_576:,.0f} MiB"
    return f"{count / 1024**3:,.1f} GiB"


def _duration(seconds: float) -> str:
    if seconds >= 3600:
        return f"{seconds / 3600:g} hour(s)"
    return f"{seconds / 60:g} minute(s)" if seconds >= 60 else f"{seconds:g} second(s)"


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
