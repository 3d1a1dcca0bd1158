"""Every use of llama-cpp-python beyond its high-level `Llama` API, in one place.

The embedded backend needs three things `Llama` does not offer as methods: the
raw llama.cpp context, llama.cpp's abort callback (to stop a cancelled prompt
mid-evaluation), and a token's text as the vocabulary spells it (the chat
template's bos/eos, rendered exactly as llama-cpp-python's own chat handler
renders them, which needs the private `Llama._model`). An upgrade may move any
of them; each function then raises LocalModelMissing naming the installed
version and what is missing, instead of quietly behaving differently.
tests/llm/test_llama_adapter.py calls each one against the real model.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from omoide.errors import LocalModelMissing

if TYPE_CHECKING:
    from llama_cpp import Llama, llama_context_p

_T = TypeVar("_T")


def installed_version() -> str:
    import llama_cpp

    return str(getattr(llama_cpp, "__version__", "(version unknown)"))


def _reach(path: str, purpose: str, get: Callable[[], _T]) -> _T:
    """`get()`, or a clear error if the attribute it reads is gone."""
    try:
        return get()
    except AttributeError as exc:
        version = installed_version()
        raise LocalModelMissing(
            f"llama-cpp-python {version} has no {path} ({exc}), which the embedded model needs for {purpose}.",
            f"Install an earlier llama-cpp-python (`pip install 'llama-cpp-python<{version}'`), "
            "or set base_url to use a server instead.",
        ) from exc


def context_pointer(llama: Llama) -> llama_context_p:
    """The llama.cpp context behind a loaded model, for the low-level calls below."""
    return _reach("Llama.ctx", "stopping a cancelled prompt", lambda: llama.ctx)


def token_text(llama: Llama, token_id: int) -> str:
    """A token's text as the vocabulary spells it (special tokens included)."""
    get_text = _reach("Llama._model.token_get_text", "the chat template's bos/eos tokens", lambda: llama._model.token_get_text)
    return get_text(token_id)


class AbortCallback:
    """A C callback llama.cpp polls while it evaluates; `should_stop()` returning
    True aborts the evaluation. llama.cpp keeps only a raw pointer to it, so keep
    this object referenced for as long as it is installed."""

    def __init__(self, should_stop: Callable[[], bool]) -> None:
        import llama_cpp

        make = _reach("llama_cpp.ggml_abort_callback", "stopping a cancelled prompt", lambda: llama_cpp.ggml_abort_callback)

        def poll(_data: ctypes.c_void_p | None) -> bool:
            return should_stop()

        self.pointer = make(poll)


def set_abort_callback(context: llama_context_p, callback: AbortCallback | None) -> None:
    """Install `callback` on the context, or remove any callback with None."""
    import llama_cpp

    install = _reach("llama_cpp.llama_set_abort_callback", "stopping a cancelled prompt", lambda: llama_cpp.llama_set_abort_callback)
    make = _reach("llama_cpp.ggml_abort_callback", "stopping a cancelled prompt", lambda: llama_cpp.ggml_abort_callback)
    install(context, callback.pointer if callback is not None else make(0), None)


LogCallback = Callable[[int, bytes], None]


def set_log_callback(on_log: LogCallback) -> object:
    """Send every llama.cpp log line (level, text) to `on_log`, process-wide.
    Returns the C callback, which the caller must keep referenced."""
    import llama_cpp

    make = _reach("llama_cpp.llama_log_callback", "keeping llama.cpp's log off the terminal", lambda: llama_cpp.llama_log_callback)
    install = _reach("llama_cpp.llama_log_set", "keeping llama.cpp's log off the terminal", lambda: llama_cpp.llama_log_set)

    def relay(level: int, text: bytes, _data: ctypes.c_void_p | None) -> None:
        on_log(level, text)

    pointer = make(relay)
    install(pointer, ctypes.c_void_p(0))
    return pointer
