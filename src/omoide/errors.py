"""The exception tree. Every error a user can meet carries a message that
says what went wrong and a hint that says what to do.

    OmoideError
    ├── ConfigError              bad config file or environment value
    ├── StoreError
    │   ├── NotAnOmoideDatabase  the file exists but is not ours, or is corrupt
    │   ├── DatabaseTooNew       written by a newer omoide (a migration this one does not know)
    │   ├── StorageUnavailable   disk full, read-only directory, locked for too long
    │   ├── HeadMoved            another window wrote in the chat first (handled by the session)
    │   └── NotFound             a chat, message or branch that does not exist
    ├── CharacterError           a character folder or card that cannot be read
    ├── CommandError             a slash command that cannot be run as typed
    ├── DownloadFailed           `omoide models pull`: not found, not GGUF, checksum, interrupted
    └── BackendError             anything from an LLM backend
        ├── BackendUnreachable   connection refused, DNS, TLS
        ├── AuthenticationFailed 401 / 403
        ├── RateLimited          429
        ├── ServerFailed         5xx
        ├── ModelNotFound        404 / unknown model
        ├── BadRequest           other 4xx
        ├── StreamStalled        no bytes for longer than the stall timeout
        ├── StreamBroken         the connection dropped mid-reply
        └── LocalModelMissing    the embedded model or its engine (xllamacpp) is missing, or cannot load the file
"""

from __future__ import annotations


class OmoideError(Exception):
    """Base of every error omoide raises on purpose."""

    def __init__(self, message: str, hint: str) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.message} {self.hint}".strip() if self.hint else self.message


class ConfigError(OmoideError):
    pass


class StoreError(OmoideError):
    pass


class NotAnOmoideDatabase(StoreError):
    pass


class DatabaseTooNew(StoreError):
    pass


class HeadMoved(StoreError):
    """The chat's head is not where the writer expected: another window wrote."""

    def __init__(self, message: str, hint: str, *, head_id: int | None = None) -> None:
        super().__init__(message, hint)
        self.head_id = head_id


class StorageUnavailable(StoreError):
    pass


class NotFound(StoreError):
    pass


class CharacterError(OmoideError):
    pass


class CommandError(OmoideError):
    pass


class NothingYet(CommandError):
    """What a command would show does not exist yet (no chat with the character,
    no conversation to end): not a failure. The CLI says so, with what to do,
    and exits 0 (docs/cli.md)."""


class DownloadFailed(OmoideError):
    pass


class BackendError(OmoideError):
    """An LLM backend failed. `retryable` marks errors worth retrying later."""

    retryable: bool = False


class BackendUnreachable(BackendError):
    retryable = True


class AuthenticationFailed(BackendError):
    pass


class RateLimited(BackendError):
    retryable = True


class ServerFailed(BackendError):
    retryable = True


class ModelNotFound(BackendError):
    pass


class BadRequest(BackendError):
    pass


class StreamStalled(BackendError):
    retryable = True


class StreamBroken(BackendError):
    retryable = True


class ReplyTooLong(BackendError):
    """The server wrote far past max_tokens: it ignores the limit, so asking again would do the same."""


class LocalModelMissing(BackendError):
    pass
