"""A group scene against the real llama_cpp.server (SmolLM2-135M): two
characters, each answering from its own prompt, each reply stored under its speaker."""

from __future__ import annotations

import pytest

from omoide.config.settings import Settings

pytestmark = pytest.mark.model


async def test_a_scene_with_two_characters_on_the_real_server(llama_server: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from omoide.characters.library import find_character
    from omoide.domain.chat import Role
    from omoide.chat.events import ReplyFinished
    from omoide.llm.openai_compat import OpenAICompatBackend
    from omoide.chat.session import ChatSession
    from omoide.store import Store

    settings = Settings(base_url=llama_server, model="smollm2", temperature=0.0, context_size=2048, max_tokens=40,
                        user_name="Kai", tools="inline", scene_seed=1, gossip_rate=0.0)
    backend = OpenAICompatBackend(settings.backend)
    store = await Store.open(tmp_path / "omoide.db")
    try:
        session = await ChatSession.open(store, find_character("suzune"), settings, backend, others=[find_character("wren")])
        replies = [e.message async for e in session.send("Wren, what are you drawing tonight?") if isinstance(e, ReplyFinished)]
        assert session.last_prompt is not None
        wren_prompt = session.last_prompt.rendered()
        replies += [e.message async for e in session.next_turn("Suzune") if isinstance(e, ReplyFinished)]
        suzune_prompt = session.last_prompt.rendered()
        await session.wait_for_memory_work()
        await session.aclose()
    finally:
        await store.close()
        await backend.aclose()
    assert [m.speaker for m in replies] == ["wren", "suzune"]
    assert all(m.role is Role.ASSISTANT and m.content.strip() for m in replies), [m.content for m in replies]
    assert "Wren is in a scene with Suzune, Kai." in wren_prompt
    assert "Suzune is in a scene with Wren, Kai." in suzune_prompt
    # Suzune's prompt carries Wren's real reply as Wren's, by name.
    assert "Wren: " in suzune_prompt and replies[0].content.strip()[:20] in suzune_prompt
