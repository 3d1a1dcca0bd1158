"""llama_adapter: the embedded backend's only way past llama-cpp-python's
high-level API. Against the real model each function must work, so an upgrade
that moves one fails here by name; against objects lacking the attribute each
must say clearly what is missing and what to do."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from omoide.config.settings import Settings
from omoide.errors import LocalModelMissing
from omoide.llm import llama_adapter
from omoide.llm.base import TextDelta
from omoide.llm.local import LocalBackend, _Model

llama_cpp = pytest.importorskip("llama_cpp")
HELLO: list[Any] = [{"role": "user", "content": "Say hello."}]


class _NoModel:
    """A `Llama` as a future llama-cpp-python might have it: no private `_model`, no `ctx`."""


class _ModelWithoutText:
    class _Inner:
        pass

    _model = _Inner()


@pytest.fixture
def model(smollm2_path) -> Iterator[_Model]:  # type: ignore[no-untyped-def]
    """The process's shared SmolLM2, held for the test like a generation holds it."""
    loaded = LocalBackend(Settings(context_size=2048))._model()
    with loaded.lock:
        yield loaded


@pytest.mark.model
def test_the_context_pointer_is_the_models_live_context(model: _Model) -> None:
    context = llama_adapter.context_pointer(model.llama)
    assert context, "a null context would make every abort-callback call a crash"
    assert llama_cpp.llama_n_ctx(context) == 2048


@pytest.mark.model
def test_token_text_spells_the_templates_special_tokens(model: _Model) -> None:
    llama = model.llama
    eos = llama_adapter.token_text(llama, llama.token_eos())
    bos = llama_adapter.token_text(llama, llama.token_bos())
    assert eos == llama.detokenize([llama.token_eos()], special=True).decode()
    assert bos == llama.detokenize([llama.token_bos()], special=True).decode()
    assert eos.startswith("<|") and bos.startswith("<|")
    assert llama.tokenize(eos.encode(), add_bos=False, special=True) == [llama.token_eos()]


@pytest.mark.model
def test_an_installed_abort_callback_stops_evaluation_and_removing_it_lets_it_run(model: _Model) -> None:
    llama = model.llama
    context = llama_adapter.context_pointer(llama)
    polls: list[int] = []

    def stop() -> bool:
        polls.append(1)
        return True

    callback = llama_adapter.AbortCallback(stop)
    tokens = llama.tokenize(b"The sea was calm and grey that morning.", add_bos=False, special=True)
    llama_adapter.set_abort_callback(context, callback)
    try:
        with pytest.raises(RuntimeError, match="llama_decode"):
            llama.eval(tokens)
    finally:
        llama_adapter.set_abort_callback(context, None)
        llama.reset()
    assert polls, "llama.cpp never asked the callback"
    polled = len(polls)
    llama.eval(tokens)
    llama.reset()
    assert len(polls) == polled, "the removed callback was still called"


@pytest.mark.model
async def test_a_moved_private_api_reaches_the_user_as_a_clear_error(
    smollm2_path, monkeypatch: pytest.MonkeyPatch,  # type: ignore[no-untyped-def]
) -> None:
    """Not wrapped as 'the embedded model failed': the message and hint survive the thread."""
    real = llama_adapter.token_text
    monkeypatch.setattr(llama_adapter, "token_text", lambda llama, token_id: real(_NoModel(), token_id))  # type: ignore[arg-type]
    backend = LocalBackend(Settings(max_tokens=4, context_size=2048))
    with pytest.raises(LocalModelMissing) as info:
        [e async for e in backend.stream(HELLO) if isinstance(e, TextDelta)]
    assert "Llama._model.token_get_text" in info.value.message
    assert "pip install 'llama-cpp-python<" in info.value.hint
    monkeypatch.undo()
    assert [e async for e in backend.stream(HELLO) if isinstance(e, TextDelta)], "the model still works"


def test_a_missing_private_model_names_the_version_and_the_attribute() -> None:
    with pytest.raises(LocalModelMissing) as info:
        llama_adapter.token_text(_NoModel(), 0)  # type: ignore[arg-type]
    message = info.value.message
    assert f"llama-cpp-python {llama_cpp.__version__} has no Llama._model.token_get_text" in message
    assert "'_NoModel' object has no attribute '_model'" in message
    assert "bos/eos" in message
    assert f"pip install 'llama-cpp-python<{llama_cpp.__version__}'" in info.value.hint
    assert "base_url" in info.value.hint


def test_a_missing_token_text_method_is_named_too() -> None:
    with pytest.raises(LocalModelMissing, match="no attribute 'token_get_text'"):
        llama_adapter.token_text(_ModelWithoutText(), 0)  # type: ignore[arg-type]


def test_a_missing_context_names_the_version_and_the_attribute() -> None:
    with pytest.raises(LocalModelMissing) as info:
        llama_adapter.context_pointer(_NoModel())  # type: ignore[arg-type]
    assert f"llama-cpp-python {llama_cpp.__version__} has no Llama.ctx" in info.value.message
    assert "cancelled prompt" in info.value.message


@pytest.mark.parametrize("binding", ["llama_set_abort_callback", "ggml_abort_callback"])
def test_a_missing_abort_binding_names_it(binding: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(llama_cpp, binding)
    with pytest.raises(LocalModelMissing, match=f"has no llama_cpp.{binding} "):
        llama_adapter.set_abort_callback(llama_cpp.llama_context_p(0), None)
