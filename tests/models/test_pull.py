"""`omoide models pull` against a local HTTP server: progress, resume after a
dropped connection, size and checksum checks, refusing a file that is not GGUF."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from omoide.errors import DownloadFailed
from omoide.models.catalog import models_dir
from omoide.models.pull import pull, resolve
from tests.fakeservers import address, http_server

MODEL = b"GGUF" + bytes(range(256)) * 2000  # ~512 KB that starts like a GGUF file
SHA = hashlib.sha256(MODEL).hexdigest()


def hf_headers(sha: str = SHA) -> dict[str, str]:
    return {"x-linked-etag": f'"{sha}"', "x-linked-size": str(len(MODEL))}


async def test_a_hugging_face_repo_file_lands_in_the_models_folder_with_progress(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[int, int | None]] = []
    with http_server(file=MODEL, file_headers=hf_headers()) as server:
        monkeypatch.setenv("HF_ENDPOINT", address(server))
        path = await pull("someone/Tiny-GGUF/tiny-Q4_K_M.gguf", progress=lambda done, total: seen.append((done, total)))
        asked = server.requests[0]["path"]
    assert asked == "/someone/Tiny-GGUF/resolve/main/tiny-Q4_K_M.gguf"
    assert path == models_dir() / "tiny-Q4_K_M.gguf" and path.read_bytes() == MODEL
    assert seen[-1] == (len(MODEL), len(MODEL)) and len(seen) > 1
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)
    assert not list(models_dir().glob("*.part"))


async def test_an_interrupted_download_resumes_where_it_stopped() -> None:
    with http_server(file=MODEL, file_headers=hf_headers(), drop_after=100_000) as server:
        url = address(server) + "/files/tiny.gguf"
        with pytest.raises(DownloadFailed) as info:
            await pull(url)
        assert "Run the same command again" in info.value.hint
        part = models_dir() / "tiny.gguf.part"
        assert part.stat().st_size == 100_000
        path = await pull(url)
        resumed = server.requests[1]
    assert resumed["range"] == "bytes=100000-"
    assert path.read_bytes() == MODEL  # and the checksum over both halves matched


async def test_a_server_that_cannot_resume_starts_over() -> None:
    (models_dir()).mkdir(parents=True)
    (models_dir() / "tiny.gguf.part").write_bytes(b"GGUF" + b"\0" * 1000)
    with http_server(file=MODEL, ranges=False) as server:
        path = await pull(address(server) + "/tiny.gguf")
    assert path.read_bytes() == MODEL


async def test_a_file_that_is_not_gguf_is_refused_and_not_kept() -> None:
    with http_server(file=b"<!DOCTYPE html><html>Sign in to continue</html>") as server:
        with pytest.raises(DownloadFailed) as info:
            await pull(address(server) + "/model.gguf")
    assert "is not a GGUF file" in info.value.message and "<!DOCTYP" in info.value.message
    assert not list(models_dir().glob("*"))


async def test_a_wrong_checksum_deletes_the_file(monkeypatch: pytest.MonkeyPatch) -> None:
    with http_server(file=MODEL, file_headers=hf_headers("0" * 64)) as server:
        monkeypatch.setenv("HF_ENDPOINT", address(server))
        with pytest.raises(DownloadFailed) as info:
            await pull("someone/Tiny-GGUF/tiny.gguf")
    assert "does not match its SHA-256" in info.value.message
    assert not list(models_dir().glob("*"))


async def test_a_checksum_given_by_the_user_is_checked() -> None:
    with http_server(file=MODEL) as server:
        with pytest.raises(DownloadFailed):
            await pull(address(server) + "/a.gguf", sha256="ab" * 32)
        path = await pull(address(server) + "/a.gguf", sha256=SHA.upper())
    assert path.read_bytes() == MODEL


async def test_a_short_file_is_reported_and_kept_for_resuming() -> None:
    with http_server(file=MODEL, file_headers={"x-linked-size": str(len(MODEL) + 10)}) as server:
        with pytest.raises(DownloadFailed) as info:
            await pull(address(server) + "/a.gguf")
    assert "stopped at" in info.value.message
    assert (models_dir() / "a.gguf.part").exists() and not (models_dir() / "a.gguf").exists()


async def test_missing_files_and_bad_sources_say_what_to_do() -> None:
    with http_server() as server:
        with pytest.raises(DownloadFailed) as info:
            await pull(address(server) + "/nothing/here")
    assert "404" in info.value.message
    with pytest.raises(DownloadFailed) as info:
        resolve("just-a-word")
    assert "recommended" in info.value.hint


def test_recommended_names_and_repo_paths_resolve(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_ENDPOINT", "http://mirror.test")
    assert resolve("qwen2.5-1.5b").url == "http://mirror.test/lmstudio-community/Qwen2.5-1.5B-Instruct-GGUF/resolve/main/Qwen2.5-1.5B-Instruct-Q4_K_M.gguf"
    assert resolve("a/b/sub/dir/x.gguf").filename == "x.gguf"
    assert resolve("https://example.test/dl/../evil%2F..%2Fname.gguf").filename.startswith("evil_")


def test_the_cli_shows_progress_and_says_how_to_use_the_file() -> None:
    from typer.testing import CliRunner

    from omoide.cli.app import app

    with http_server(file=MODEL, file_headers=hf_headers()) as server:
        result = CliRunner().invoke(app, ["models", "pull", address(server) + "/tiny.gguf"])
    assert result.exit_code == 0, result.output
    assert "tiny.gguf" in result.stderr and f"downloaded {len(MODEL):,} bytes" in result.stderr
    assert "omoide models use tiny.gguf" in result.stdout
    listed = CliRunner().invoke(app, ["models"])
    assert "tiny.gguf" in listed.stdout and "downloaded" in listed.stdout
    assert Path(models_dir() / "tiny.gguf").exists()
