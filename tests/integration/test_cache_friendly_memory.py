"""Memory work keeps the chat's prompt cache: a memory request on the chat's own
backend continues the chat's prompt, and the summary grows at its end."""

from __future__ import annotations

from pathlib import Path

import pytest

from omoide.characters.model import Character
from omoide.config.settings import Settings
from omoide.llm.base import MEMORY_TASK, ChatMessage
from omoide.memory.shared import task_of
from omoide.memory.summary import SEGMENT_MIN_TOKENS, SUMMARY_MAX_TOKENS
from omoide.memory.prompt.fit import shared_prefix_chars
from omoide.memory.prompt.model import render
from omoide.chat.session import ChatSession
from omoide.store import Store
from tests.scripted import ScriptedBackend

MIKA = Character(id="mika", name="Mika", first_message="*waves* Hi, {{user}}!", description="{{char}} keeps a small bakery.")
SUMMARIES = iter(f"Kai and Mika talked about the bakery, part {i}. She promised to save him a melon pan, and he was pleased." for i in range(1, 99))
SUMMARY_TASKS = ("Summarize the following conversation", "Continue the running summary")


def model(messages: list[ChatMessage]) -> list[str]:
    """One backend for the chat and its memory work, as in the default setup."""
    if task_of(messages).startswith(SUMMARY_TASKS):
        return [next(SUMMARIES)]
    return ["*She dusts flour off her hands.* Fresh bread today."]


def is_summary(call: dict) -> bool:  # type: ignore[type-arg]
    return task_of(call["messages"]).startswith(SUMMARY_TASKS)


async def talk(session: ChatSession, turns: int) -> None:
    for i in range(turns):
        async for _ in session.send(f"Message {i}: how is the oven today?"):
            pass
        await session.wait_for_memory_work()


async def test_a_summary_request_continues_the_chats_prompt(store: Store) -> None:
    backend = ScriptedBackend(default=model)
    session = await ChatSession.open(store, MIKA, Settings(user_name="Kai", recent_messages=2, summary_threshold=3), backend)
    await talk(session, 3)
    calls = backend.calls
    index = next(i for i, call in enumerate(calls) if is_summary(call))
    request, chat = calls[index]["messages"], calls[index - 1]["messages"]
    assert not is_summary(calls[index - 1])
    # The chat's prompt as far as the last message summarized (nothing newer may reach the
    # summary), then the task.
    assert chat[-1]["role"] == "system" and "Current date and time" in chat[-1]["content"]
    assert request[-1]["role"] == "user" and request[-1]["content"].startswith(MEMORY_TASK)
    assert "Kai: Message 0: how is the oven today?" in request[-1]["content"]  # the material is quoted as before
    shown = request[:-1]
    assert shown == chat[: len(shown)] and shown[-1]["content"].endswith("Fresh bread today.")
    assert "Message 1" not in render(shown) and "Message 1" in render(chat)  # said after the span: not shown
    # What a prefix cache holds after the chat's reply is still the start of the memory request.
    assert render(chat[:-1]).startswith(render(shown))
    # The next turn's prompt starts as the request did, up to where the new summary begins.
    following = calls[index + 1]["messages"]
    card_end = following[0]["content"].index("\n\n## Recent Conversation Summary")
    assert shared_prefix_chars(render(request), render(following)) >= len("<system>\n") + card_end


async def test_a_separate_summarizer_gets_the_request_on_its_own(store: Store) -> None:
    chat, summarizer = ScriptedBackend(default=model), ScriptedBackend(default=model)
    session = await ChatSession.open(
        store, MIKA, Settings(user_name="Kai", recent_messages=2, summary_threshold=3), chat, summarizer=summarizer,
    )
    await talk(session, 3)
    assert summarizer.calls and all(len(c["messages"]) == 2 for c in summarizer.calls)
    assert summarizer.calls[0]["messages"][0]["content"].startswith("Summarize the following conversation")


async def test_a_request_too_long_for_the_context_stands_alone(store: Store) -> None:
    """A continuation that would overflow the context is sent as before, not cut."""
    backend = ScriptedBackend(default=model)
    session = await ChatSession.open(
        store, MIKA, Settings(user_name="Kai", recent_messages=2, summary_threshold=3, context_size=600, max_tokens=100), backend,
    )
    await talk(session, 3)
    summaries = [c for c in backend.calls if is_summary(c)]
    assert summaries and summaries[0]["messages"][0]["content"].startswith("Summarize the following conversation")
    assert len(summaries[0]["messages"]) == 2


async def test_compression_appends_and_keeps_the_earlier_memory_byte_for_byte(store: Store) -> None:
    backend = ScriptedBackend(default=model)
    session = await ChatSession.open(store, MIKA, Settings(user_name="Kai", recent_messages=2, summary_threshold=3), backend)
    heads: list[str] = []
    summaries: list[str] = []
    for i in range(8):
        await talk(session, 1)
        memory = await session.memory()
        text = memory.summary.content if memory.summary else ""
        if text and text not in summaries:
            summaries.append(text)
            async for _ in session.send(f"After compression {len(summaries)}"):
                pass
            await session.wait_for_memory_work()
            assert session.last_prompt is not None
            heads.append(session.last_prompt.messages[0]["content"])
    assert len(summaries) >= 3
    for earlier, later in zip(summaries, summaries[1:]):
        assert later.startswith(earlier + "\n\n"), "a compression rewrote the earlier summary"
    # The leading system message (card, then memory) only grows: a prefix cache keeps all of it.
    for earlier, later in zip(heads, heads[1:]):
        assert later.startswith(earlier)
    tasks = [task_of(c["messages"]) for c in backend.calls if is_summary(c)]
    assert tasks[0].startswith("Summarize the following conversation")
    assert all(t.startswith("Continue the running summary") for t in tasks[1:])
    # The first summary and each part are held to about the size of their messages.
    limits = [c["max_tokens"] for c in backend.calls if is_summary(c)]
    assert limits and all(limit == SEGMENT_MIN_TOKENS for limit in limits)


async def test_a_long_summary_is_merged_into_one(store: Store) -> None:
    backend = ScriptedBackend(default=model)
    session = await ChatSession.open(
        store, MIKA, Settings(user_name="Kai", recent_messages=2, summary_threshold=3, summary_merge_chars=150), backend,
    )
    await talk(session, 8)
    tasks = [task_of(c["messages"]) for c in backend.calls if is_summary(c)]
    kinds = [t.split(" ")[0] for t in tasks]
    assert kinds[:3] == ["Summarize", "Continue", "Summarize"], kinds  # 105 chars, then 210: past 150, merged
    limits = [c["max_tokens"] for c in backend.calls if is_summary(c)]
    assert limits[2] == SUMMARY_MAX_TOKENS and limits[0] == SEGMENT_MIN_TOKENS  # only the rewrite takes the whole length
    memory = await session.memory()
    assert memory.summary is not None and "\n\n" not in memory.summary.content.strip()


@pytest.mark.model
async def test_the_embedded_model_reads_the_chats_tokens_first_in_a_memory_request(store: Store, smollm2_path: Path) -> None:
    """In tokens, as the embedded model reads them: the memory request starts
    with every token of the chat's prompt up to where the next turn's prompt
    would leave it too (the embedded model reads the tail just before the last
    user message), so the cache the reply left is extended, not replaced."""
    from omoide.llm.local import LocalBackend

    backend = ScriptedBackend(default=model)
    session = await ChatSession.open(store, MIKA, Settings(user_name="Kai", recent_messages=2, summary_threshold=3), backend)
    await talk(session, 3)
    index = next(i for i, call in enumerate(backend.calls) if is_summary(call))
    request, chat = backend.calls[index]["messages"], backend.calls[index - 1]["messages"]
    local = LocalBackend(Settings(context_size=2048))
    sent, asked = (local.tokenize(local.render_prompt(m)) for m in (chat, request))
    assert chat[-2]["role"] == "user" and chat[-1]["role"] == "system"
    before_tail = local.tokenize(local.render_prompt(chat[:-2]))  # card, memory and the window but its last message
    shared = next((i for i, (a, b) in enumerate(zip(sent, asked)) if a != b), min(len(sent), len(asked)))
    assert shared >= len(before_tail) - len(local.tokenize("<|im_start|>assistant\n")), (shared, len(before_tail))
    assert shared / len(sent) > 0.6


async def test_the_world_pass_of_the_chats_conversation_continues_its_prompt(store: Store) -> None:
    from omoide.characters.library import find_character
    from tests.world_script import WorldScript, step_of

    script = WorldScript()
    answer = script.default()
    backend = ScriptedBackend(default=lambda m: answer(m) if step_of(m) != "chat" else ["*She nods.* Good luck."])
    session = await ChatSession.open(store, find_character("suzune"), Settings(user_name="Kai", context_size=8192), backend)
    await talk(session, 1)
    chat = backend.calls[-1]["messages"]
    conversation = await session.end_conversation(background=False)
    result = await session.world.run(conversation.id)
    assert result.failed == [] and script.steps()
    world = [c["messages"] for c in backend.calls if step_of(c["messages"]) != "chat"]
    assert len(world) == len(script.asked)
    for request in world:
        assert request[: len(chat) - 1] == chat[:-1] and request[-1]["content"].startswith(MEMORY_TASK)


def test_the_play_script_ends_a_continued_request_with_its_task_not_a_cue() -> None:
    """The embedded model reads a chat reply as a play script; memory work that
    continues it reads the same script, then the task (no line for the character)."""
    from omoide.llm.play_script import script_prompt

    head: ChatMessage = {"role": "system", "content": "You are Mika."}
    chat: list[ChatMessage] = [head, {"role": "user", "content": "[04/01 20:00] Hi"}, {"role": "system", "content": "It is evening."}]
    reply: ChatMessage = {"role": "assistant", "content": "[04/01 20:01] Fresh bread today."}
    task: ChatMessage = {"role": "user", "content": f"{MEMORY_TASK}\n\nSummarize it.\n\nSummary:"}
    as_chat = script_prompt(chat, "Kai", "Mika")
    as_task = script_prompt([head, chat[1], reply, task], "Kai", "Mika")
    assert as_task.endswith("Summary:") and "Mika:\n" not in as_task and "Kai: (The story pauses" not in as_task
    assert as_task.startswith(as_chat.split("(It is evening.)")[0])
    assert "[04/01 20:01] Mika: Fresh bread today." in as_task


async def test_a_compression_too_long_to_continue_the_prompt_summarizes_the_oldest_part_that_fits(store: Store) -> None:
    """Sent alone, a summary request evicts the chat's cache on a one-slot server,
    and a rejected one is retried at every turn. So when quoting every message
    due would overflow the context after the chat's prompt, the request takes
    the oldest of them that fit; the rest stays raw for the next compression."""
    def talkative(messages: list[ChatMessage]) -> list[str]:
        if task_of(messages).startswith(SUMMARY_TASKS):
            return ["Kai and Mika talked about bread for a long while, and she promised him a melon pan."]
        return ["*She dusts flour off her hands.* " + "Fresh bread today, warm from the oven. " * 8]

    backend = ScriptedBackend(default=talkative)
    settings = Settings(user_name="Kai", recent_messages=2, summary_threshold=10, context_size=2500, max_tokens=100)
    session = await ChatSession.open(store, MIKA, settings, backend)
    for i in range(6):
        async for _ in session.send(f"Message {i}: " + "how is the oven today, and the flour? " * 8):
            pass
        await session.wait_for_memory_work()
    [call] = [c["messages"] for c in backend.calls if is_summary(c)]
    assert len(call) > 2 and call[-1]["content"].startswith(MEMORY_TASK)  # it continues the chat's prompt
    quoted = call[-1]["content"]
    assert "Kai: Message 0:" in quoted and "Kai: Message 3:" not in quoted  # the oldest part of what was due
    summary = (await session.memory()).summary
    assert summary is not None and summary.covers_to_id is not None
    path = await store.messages.path(session.chat.head_id)
    covered = [m.content for m in path if m.id <= summary.covers_to_id]
    assert any(c.startswith("Message 0:") for c in covered) and not any(c.startswith("Message 3:") for c in covered)
