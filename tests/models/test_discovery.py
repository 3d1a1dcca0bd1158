"""Finding model servers on local ports: fake Ollama, llama.cpp and KoboldCpp
servers, a hung one and a closed port, probed together."""

from __future__ import annotations

from omoide.models.discovery import discover as _discover
from omoide.models.discovery import FoundServer, probe
from tests.fakeservers import address, closed_port, http_server, ollama, openai_models, silent_server


async def discover(addresses: list[str], timeout: float = 30.0) -> list[FoundServer]:
    """Generous by default: on a busy machine even a local answer can take a while."""
    return await _discover(addresses, timeout=timeout)


async def test_servers_that_answer_are_listed_with_their_models_in_the_order_asked() -> None:
    with http_server(ollama("llama3.1:8b", "mistral-nemo:12b")) as olla, \
            http_server(openai_models("koboldcpp/Mistral-7B", owned_by="koboldcpp")) as kobold, \
            http_server(openai_models("gemma-3-4b-it")) as llamacpp:
        found = await discover([address(olla), closed_port(), address(kobold), address(llamacpp) + "/v1"])
    assert [(s.name, s.models) for s in found] == [
        ("Ollama", ("llama3.1:8b", "mistral-nemo:12b")),
        ("KoboldCpp", ("koboldcpp/Mistral-7B",)),
        ("llama.cpp server", ("gemma-3-4b-it",)),
    ]
    assert found[0].base_url == address(olla) + "/v1"
    assert found[2].base_url == address(llamacpp) + "/v1"


async def test_hung_servers_are_given_up_on_without_hiding_the_others() -> None:
    with silent_server() as hung, silent_server() as hung2, http_server(ollama("qwen2.5:7b")) as olla:
        found = await discover([hung, hung2, address(olla)], timeout=3.0)
    assert [s.models for s in found] == [("qwen2.5:7b",)]


async def test_something_else_on_the_port_is_not_a_model_server() -> None:
    with http_server({"/": {"hello": "world"}, "/v1/models": {"unexpected": True}}) as other:
        assert await discover([address(other)]) == []


async def test_nothing_to_probe_finds_nothing() -> None:
    assert await discover([]) == []
    assert await discover([closed_port(), closed_port()]) == []


async def test_an_unknown_openai_server_on_an_odd_port_is_named_generically() -> None:
    import httpx

    with http_server(openai_models("my-model", owned_by="someone")) as other:
        async with httpx.AsyncClient(timeout=1) as client:
            found = await probe(client, address(other))
    assert found is not None and found.name == "OpenAI-compatible server" and found.models == ("my-model",)


async def test_a_model_list_that_never_ends_is_given_up_at_its_size_cap(fault_server) -> None:  # type: ignore[no-untyped-def]
    import itertools
    import tracemalloc

    from tests.faultserver import Reply

    fault_server.queue(*[Reply(chunks=itertools.repeat(b'{"data": [' + b'{"id": "m"}, ' * 5000))] * 2)  # type: ignore[arg-type]
    tracemalloc.start()
    try:
        found = await discover([f"http://127.0.0.1:{fault_server.port}"], timeout=60.0)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert found == []
    assert peak < 64 * 1024 * 1024, f"{peak / 1_048_576:.0f} MiB held"  # the cap is 8 MiB a list
