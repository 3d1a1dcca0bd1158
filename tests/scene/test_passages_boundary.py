"""Memories that come to mind keep to the scene boundary: a secret told to
Suzune alone comes back to her when it is touched, never to Wren, who was not
there (real SQLite, a real scene, the scripted model capturing each prompt)."""

from __future__ import annotations

from omoide.characters.library import find_character
from omoide.chat.session import ChatSession
from omoide.config.settings import Settings
from omoide.domain.chat import Role
from omoide.llm.base import ChatMessage, is_memory_task
from omoide.memory.passages import HEADING
from omoide.store import Store
from tests.scripted import ScriptedBackend

SECRET = "Reykjavik"


def chat_prompts(backend: ScriptedBackend, speaker: str) -> list[list[ChatMessage]]:
    return [c["messages"] for c in backend.calls
            if (c["messages"][0].get("speakers") or ["", ""])[1] == speaker and not is_memory_task(c["messages"][-1])]


def closing(messages: list[ChatMessage]) -> str:
    return str(messages[-1].get("content", ""))


async def test_a_secret_told_to_suzune_never_comes_to_wrens_mind(store: Store) -> None:
    chat = await store.chats.create("suzune", greeting="Welcome in.")
    head = await store.messages.add(chat.id, chat.head_id, Role.USER, f"A secret, Suzune: I applied for the observatory job in {SECRET}.")
    for i in range(12):
        head = await store.messages.add(chat.id, head.id, Role.ASSISTANT if i % 2 == 0 else Role.USER, f"Rain again, part {i}.")
    await store.memory.add_summary(chat.id, head.id, content="Kai and Suzune talked in the rain.", covers_to_id=head.id, diary_to_id=None)
    head = await store.messages.add(chat.id, head.id, Role.ASSISTANT, "More tea?")

    backend = ScriptedBackend(default=lambda m: ["Mm."])
    settings = Settings(user_name="Kai", summary_threshold=10_000, context_size=8192, max_tokens=200, scene_seed=3)
    session = await ChatSession.open(store, find_character("suzune"), settings, backend, chat_id=chat.id)
    await session.scene.invite("wren")
    question = "Has anyone heard news of an observatory job?"
    [_ async for _ in session.send(question, speaker="wren")]
    [_ async for _ in session.send(question, speaker="suzune")]

    [wren] = chat_prompts(backend, "Wren")
    suzune = chat_prompts(backend, "Suzune")[-1]
    assert SECRET in closing(suzune) and closing(suzune).startswith(HEADING), "Suzune, who was told, remembers it"
    assert SECRET not in "\n".join(str(m.get("content", "")) for m in wren), "Wren was not there"
