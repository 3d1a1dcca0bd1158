"""A compression on a play-script prompt only removes old lines and adds its part
after the newest one ([memory] summary_placement = "auto", memory/timeline.py):
the next turn reads the window from the cache instead of evaluating it again."""

from __future__ import annotations

from pathlib import Path

import pytest

from omoide.characters.library import find_character
from omoide.characters.model import Character
from omoide.chat.session import ChatSession
from omoide.config.settings import Settings
from omoide.domain.chat import Recap
from omoide.llm.base import ChatMessage
from omoide.memory.prompt.layers import RECAP_LABEL, SUMMARY_LABEL
from omoide.memory.shared import task_of
from omoide.store import Store
from tests.scripted import ScriptedBackend

MIKA = Character(id="mika", name="Mika", first_message="*waves* Hi, {{user}}!",
                 description="{{char}} keeps a small bakery by the station and knows every regular by name.")
SUMMARY_TASKS = ("Summarize the following conversation", "Continue the running summary")


def summarizer() -> ScriptedBackend:
    parts = iter(range(1, 99))

    def write(messages: list[ChatMessage]) -> list[str]:
        n = next(parts)
        if task_of(messages).startswith(SUMMARY_TASKS[0]) and any("Previous summary:" in m.get("content", "") for m in messages):
            return [f"Kai and Mika talked about the bakery (all of it, merged {n}); she promised him a melon pan."]
        return [f"Part {n}: Kai asked about the oven and Mika said the bread was rising well, and he was pleased."]
    return ScriptedBackend(default=write)


def replies() -> ScriptedBackend:
    count = iter(range(1, 999))
    return ScriptedBackend(default=lambda messages: [f"*She dusts flour off her hands.* Fresh bread, batch {next(count)}."])


def scripting(backend: ScriptedBackend) -> ScriptedBackend:
    backend.recaps_in_window = True  # type: ignore[attr-defined]  # as the embedded model's play script and a server
    return backend


async def talk(session: ChatSession, turns: int, start: int = 0, names: tuple[str, ...] = ("",)) -> None:
    """`names`: whom each message calls on in turn (a scene's next speaker is
    otherwise drawn at random, and one could speak only before any part)."""
    for i in range(start, start + turns):
        async for _ in session.send(f"{names[i % len(names)]}Message {i}: how is the oven today?"):
            pass
        await session.wait_for_memory_work()


def recaps(messages: list[dict]) -> list[str]:  # type: ignore[type-arg]
    return [m["content"] for m in messages[1:] if m["role"] == "system" and m["content"].startswith(RECAP_LABEL)]


async def test_each_part_stays_where_it_was_written_and_the_head_keeps_its_text(store: Store) -> None:
    chat = scripting(replies())
    settings = Settings(user_name="Kai", recent_messages=2, summary_threshold=3)
    session = await ChatSession.open(store, MIKA, settings, chat, summarizer=summarizer())
    await talk(session, 6)
    prompts = [c["messages"] for c in chat.calls]
    assert "Recent Conversation Summary" not in prompts[-1][0]["content"]  # nothing rewritten: the head is as it was
    assert all(p[0]["content"] == prompts[0][0]["content"] for p in prompts)
    parts = recaps(prompts[-1])
    assert len(parts) >= 2 and all("Part " in p for p in parts)
    assert [int(p.split("Part ")[1].split(":")[0]) for p in parts] == sorted(int(p.split("Part ")[1].split(":")[0]) for p in parts)
    # Each turn's window is the previous turn's less some messages, then what is new: nothing is placed
    # before a line a prompt cache holds (llama.cpp skips removed text, never inserted text).
    for before, after in zip(prompts, prompts[1:]):
        old = [m["content"] for m in before[1:-1]]  # less the volatile tail
        new = [m["content"] for m in after[1:]]
        kept = [line for line in old if line in new]
        assert new[: len(kept)] == kept
        assert not any(line.startswith(RECAP_LABEL) for line in old if line not in new), "a part, once placed, stays"
    memory = await session.memory()  # what /summary shows is the whole summary, as before
    assert memory.summary is not None and all(p.removeprefix(RECAP_LABEL).strip() in memory.summary.content for p in parts)


async def test_in_a_scene_every_speaker_reads_the_parts_in_its_window(store: Store) -> None:
    """Each speaker's memory is bounded by what it witnessed; one present from
    the start reads the chat's summary, so its head too stays as it was."""
    chat = scripting(replies())
    session = await ChatSession.open(store, find_character("suzune"), Settings(user_name="Kai", recent_messages=2, summary_threshold=3),
                                     chat, summarizer=summarizer(), others=[find_character("wren")])
    await talk(session, 8, names=("Suzune, ", "Wren, "))
    by_speaker: dict[str, list[list[dict]]] = {}  # type: ignore[type-arg]
    for call in chat.calls:
        by_speaker.setdefault(call["cache_key"], []).append(call["messages"])
    assert sorted(by_speaker) == ["suzune", "wren"]
    for prompts in by_speaker.values():
        assert all(p[0]["content"] == prompts[0][0]["content"] for p in prompts)
        assert recaps(prompts[-1])


async def test_a_rewrite_takes_the_parts_out_and_goes_in_the_window_where_it_was_written(store: Store) -> None:
    """A rewrite too only removes text and adds its own at the end: the head stays
    as it was, and the window as the last prompt had it, less the old parts."""
    chat = scripting(replies())
    settings = Settings(user_name="Kai", recent_messages=2, summary_threshold=3, summary_merge_chars=250)
    session = await ChatSession.open(store, MIKA, settings, chat, summarizer=summarizer())
    await talk(session, 9)
    prompts = [c["messages"] for c in chat.calls]
    at = next(i for i, p in enumerate(prompts) if any("merged" in m["content"] for m in p[1:]))
    assert recaps(prompts[at - 1]) and all(p[0]["content"] == prompts[0][0]["content"] for p in prompts)
    whole = [m["content"] for m in prompts[at][1:] if m["content"].startswith(SUMMARY_LABEL)]
    assert len(whole) == 1 and "merged" in whole[0] and "melon pan" in whole[0]
    assert not recaps(prompts[at])  # the parts it replaced are gone
    old = [m["content"] for m in prompts[at - 1][1:-1]]  # less the volatile tail
    new = [m["content"] for m in prompts[at][1:]]
    kept = [line for line in old if line in new]
    assert kept and new[: len(kept)] == kept and new.index(whole[0]) >= len(kept)  # nothing before what the cache holds


async def test_head_placement_and_other_backends_keep_the_summary_before_the_window(store: Store) -> None:
    for backend, settings in ((scripting(replies()),
                               Settings(user_name="Kai", recent_messages=2, summary_threshold=3, summary_placement="head")),
                              (replies(),
                               Settings(user_name="Kai", recent_messages=2, summary_threshold=3))):
        session = await ChatSession.open(store, MIKA, settings, backend, summarizer=summarizer())
        await talk(session, 4)
        last = backend.calls[-1]["messages"]
        assert "Part " in last[0]["content"] and not recaps(last)


@pytest.mark.model
async def test_the_turn_after_a_compression_reads_the_window_from_the_engines_cache(tmp_path: Path, smollm2_path: Path) -> None:
    """On the embedded engine, from its own counts: after each compression the
    reply, with what the engine evaluated ahead of it while the user read
    (TurnRunner.warm), evaluates its new lines and the new part, not the window
    again (as it does with summary_placement = "head")."""
    from omoide.llm.local import LocalBackend

    evaluated: dict[str, list[tuple[int, int, int]]] = {}
    """Per placement, per reply after a compression: (tokens evaluated ahead of it
    while the user read, tokens its own prompt evaluated, its prompt's tokens)."""
    for placement in ("auto", "head"):
        # recall_passages = 0: memories that come to mind are evaluated anew every turn
        # wherever the summary goes; this measures only what the summary's placement costs.
        settings = Settings(user_name="Kai", recent_messages=6, summary_threshold=8, summary_placement=placement,
                            max_tokens=12, temperature=0.0, seed=1, context_size=2048, recall_passages=0)
        store = await Store.open(tmp_path / f"{placement}.db")
        session = await ChatSession.open(store, MIKA, settings, LocalBackend(settings), summarizer=summarizer())
        compressions, after_one, ahead = 0, False, 0
        for i in range(14):
            session.turns.warmed = None
            await talk(session, 1, start=i)
            usage = session.last_prompt.usage if session.last_prompt else None
            assert usage is not None and usage.prompt_tokens
            if after_one:  # this reply's prompt is the first with the part the previous turn's memory work added
                evaluated.setdefault(placement, []).append(
                    (ahead, usage.prompt_tokens - (usage.cache_read_tokens or 0), usage.prompt_tokens))
            warm = session.turns.warmed
            ahead = (warm.prompt_tokens or 0) - (warm.cache_read_tokens or 0) if warm else 0
            summary = (await session.memory()).summary
            parts = summary.content.count("Part ") if summary else 0
            after_one, compressions = parts > compressions, parts
        await session.aclose()
        await store.close()
    assert len(evaluated["auto"]) >= 2 and len(evaluated["head"]) >= 2, evaluated
    for (auto, auto_reply, prompt), (head, head_reply, _) in zip(evaluated["auto"], evaluated["head"]):
        assert auto < prompt / 4 and head > 2 * auto, evaluated  # what the compression cost the chat's cache
        assert auto_reply < prompt / 4 and head_reply < prompt / 4, evaluated  # what the reply waited for


async def test_the_walk_skips_a_diary_checkpoint_and_stops_at_a_rewrite(store: Store) -> None:
    """Checkpoints as the worker records them: a diary compression copies the
    summary's text (no part of its own); a rewrite is the new base."""
    from omoide.memory.timeline import summary_timeline

    session = await ChatSession.open(store, MIKA, Settings(user_name="Kai", summary_threshold=999), replies())
    await talk(session, 4)
    path = await store.messages.path((await store.chats.get(session.chat.id)).head_id or 0, limit=20)
    add = store.memory.add_summary
    chat = session.chat.id
    first = await add(chat, path[2].id, content="[one] A.", covers_to_id=path[1].id, diary_to_id=None)
    await add(chat, path[3].id, content="[one] A.", covers_to_id=path[1].id, diary_to_id=None)  # the diary's
    second = await add(chat, path[4].id, content="[one] A.\n\n[two] B.", covers_to_id=path[2].id, diary_to_id=None)
    assert await summary_timeline(store, second) == (None, [Recap(path[2].id, "[one] A."), Recap(path[4].id, "[two] B.")])
    rewrite = await add(chat, path[5].id, content="[all] A and B.", covers_to_id=path[3].id, diary_to_id=None)
    third = await add(chat, path[6].id, content="[all] A and B.\n\n[three] C.", covers_to_id=path[4].id, diary_to_id=None)
    base, parts = await summary_timeline(store, third)
    assert base is None and first.content in second.content
    assert parts == [Recap(rewrite.anchor_id, "[all] A and B.", whole=True), Recap(path[6].id, "[three] C.")]
