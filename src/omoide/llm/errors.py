"""Turning HTTP failures into errors that say what to do."""

from __future__ import annotations

import json
import re

import httpx

from omoide.errors import (
    AuthenticationFailed,
    BackendError,
    BackendUnreachable,
    BadRequest,
    ModelNotFound,
    RateLimited,
    ServerFailed,
)

RETRYABLE_STATUS = frozenset({408, 409, 429, *range(500, 600)})
_MISSING_MODEL = ("model_not_found", "not found", "does not exist", "no such model", "unknown model", "try pulling it")


DETAIL_CHARS = 300
SECRET_FRAGMENT = 8
"""Any run of this many characters of the API key is taken for (part of) the key."""


SHOWN_KEY_END = 4
"""Characters of the key's end a masked echo may keep (`****cdef`), so the user can tell which key was sent."""
_MASKED = re.compile(r"([\w-]*)(\*{2,}|•{2,})([\w-]*)")
"""A key as servers echo it masked: `sk-ENV****cdef`, `sk-proj-****...****cdef`."""


def _mask_echoes(text: str, secret: str) -> str:
    """Masked echoes of the key cut down to its last SHOWN_KEY_END characters: the
    server's own mask shows the start and the end, ten characters or more."""
    key = secret.lower()

    def shorten(match: re.Match[str]) -> str:
        head, tail = match.group(1), match.group(3)
        ours = (len(head) >= 2 and key.startswith(head.lower())) or (len(tail) >= 2 and key.endswith(tail.lower()))
        if not ours:
            return match.group()
        end = tail[-SHOWN_KEY_END:] if key.endswith(tail.lower()) else ""
        return "****" + end

    return _MASKED.sub(shorten, text)


def redact(text: str, secret: str | None) -> str:
    """`text` with the key blanked out: whole or in part (any run of 8+ of its
    characters), in any letter case; a masked echo of it keeps at most its last
    SHOWN_KEY_END characters."""
    if not secret or len(secret) < SECRET_FRAGMENT:
        return text.replace(secret, "[API key]") if secret else text
    text = _mask_echoes(text, secret)
    key = secret.lower()
    grams = {key[i : i + SECRET_FRAGMENT] for i in range(len(key) - SECRET_FRAGMENT + 1)}
    lowered = text.lower()
    hidden = [False] * len(text)
    for i in range(len(text) - SECRET_FRAGMENT + 1):
        if lowered[i : i + SECRET_FRAGMENT] in grams:
            hidden[i : i + SECRET_FRAGMENT] = [True] * SECRET_FRAGMENT
    if not any(hidden):
        return text
    out: list[str] = []
    for i, ch in enumerate(text):
        if not hidden[i]:
            out.append(ch)
        elif i == 0 or not hidden[i - 1]:
            out.append("[API key]")
    return "".join(out)


def error_detail(body: bytes, *, secret: str | None = None) -> str:
    """The server's own message, when the body is the usual {"error": ...} JSON,
    with the API key blanked out should the server echo it (before the cut, so
    no part of it survives)."""
    detail = redact(_detail(body)[: 64 * 1024], secret)
    return detail if len(detail) <= DETAIL_CHARS else detail[:DETAIL_CHARS] + "…"


def _detail(body: bytes) -> str:
    try:
        data = json.loads(body)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return body.decode("utf-8", errors="replace").strip()
    if isinstance(data, dict):
        error = data.get("error", data)
        if isinstance(error, dict):
            return str(error.get("message") or error.get("type") or error)
        return str(error)
    return str(data)


def http_error(status: int, body: bytes, *, url: str, model: str, secret: str | None = None) -> BackendError:
    detail = error_detail(body, secret=secret)
    said = f" The server said: {detail}" if detail else ""
    if status in (401, 403):
        return AuthenticationFailed(
            f"The server at {url} refused the API key ({status}).{said}",
            "Set the right key in OMOIDE_API_KEY or api_key in the config file.",
        )
    if status == 404 and not _names_a_missing_model(body) and "model" not in detail.lower():
        # A bare 404 is more often a base_url without its /v1 than a missing model.
        return ModelNotFound(
            f"The server at {url} answered 404 (not found): no model '{model}' there, or the wrong address.{said}",
            "Check base_url (OpenAI-compatible servers usually end it in /v1) and `model`; `omoide doctor` tests both.",
        )
    if status == 404 or (400 <= status < 500 and status != 429 and _names_a_missing_model(body)):
        return ModelNotFound(
            f"The server at {url} has no model '{model}' ({status}).{said}",
            "Check `model` in the config (`omoide doctor` lists the server's models) and `base_url`.",
        )
    if status == 429:
        return RateLimited(f"The server at {url} is rate-limiting requests (429).{said}", "Wait a moment and send again.")
    if status in (408, 409):
        return ServerFailed(f"The server at {url} could not take the request just now ({status}).{said}", "Send again in a moment.")
    if status >= 500:
        return ServerFailed(f"The server at {url} failed ({status}).{said}", "It may be overloaded or restarting; send again in a moment.")
    return BadRequest(f"The server at {url} rejected the request ({status}).{said}", "Check the model and sampling settings with `omoide doctor`.")


def _names_a_missing_model(body: bytes) -> bool:
    text = body.decode("utf-8", errors="replace").lower()
    return "model" in text and any(phrase in text for phrase in _MISSING_MODEL)


def connect_error(exc: httpx.HTTPError, url: str) -> BackendUnreachable:
    return BackendUnreachable(
        f"Cannot reach the server at {url} ({type(exc).__name__}).",
        "Is it running? Check base_url in the config or OMOIDE_BASE_URL, then run `omoide doctor`.",
    )
