"""The memo book end to end: a ChatSession on a real SQLite file, a scripted
chat model and a scripted summarizer."""

from __future__ import annotations

import pytest

from omoide.characters.model import Character
from omoide.config.settings import Settings
from omoide.domain.chat import MemoAuthor, MemoStatus
from omoide.errors import BackendUnreachable
from omoide.memory.events import MemoryEvent, MemoryWorkDone, MemoryWorkFailed
from omoide.llm.base import ChatMessage
from omoide.chat.session import ChatSession
from omoide.store import Store
from tests.scripted import ScriptedBackend

MIKA = Character(id="mika", name="Mika", first_message="*waves* Hi, {{user}}!")
GOOD = "【Highlight 1】: Kai named the bakery cat Kinako.\n【Highlight 2】: Mika gave Kai her grandmother's whisk."


def memo_settings(**kw: object) -> Settings:
    base: dict[str, object] = {"user_name": "Kai", "context_size": 4096, "max_tokens": 200, "memory_style": "memos"}
    base.update(kw)
    return Settings(**base)  # type: ignore[arg-type]


async def open_session(store: Store, summarizer: ScriptedBackend, events: list[MemoryEvent] | None = None,
                       chat: ScriptedBackend | None = None, **kw: object) -> ChatSession:
    return await ChatSession.open(
        store, MIKA, memo_settings(**kw), chat or ScriptedBackend(default=lambda m: ["*nods* Mm."]),
        summarizer=summarizer, on_memory_event=events.append if events is not None else None,
    )


async def turns(session: ChatSession, n: int, text: str = "Tell me more") -> None:
    for i in range(n):
        async for _ in session.send(f"{text} {i}"):
            pass
        await session.wait_for_memory_work()


async def test_every_eight_messages_become_a_memo_of_highlights(store: Store) -> None:
    summarizer = ScriptedBackend(default=lambda m: [GOOD])
    events: list[MemoryEvent] = []
    session = await open_session(store, summarizer, events)
    await turns(session, 3)  # greeting + 6 messages: no batch is full
    assert await session.book.pages() == [] and summarizer.calls == []
    await turns(session, 1, "At last")  # depth 8: the batch of depths 0-7 is full
    pages = await session.book.pages()
    path = await session.transcript()
    assert len(pages) == 1
    memo = pages[0]
    assert (memo.first_id, memo.anchor_id) == (path[0].id, path[7].id)
    assert memo.highlights == ("Kai named the bakery cat Kinako.", "Mika gave Kai her grandmother's whisk.")
    assert memo.author is MemoAuthor.MODEL and memo.byline == "made"
    request = summarizer.calls[0]["messages"]
    assert "Relationship progression" in request[0]["content"] and "routine daily activities" in request[0]["content"]
    assert "Kai: At last 0" in request[1]["content"] and request[1]["content"].count("Mika: *nods* Mm.") == 3
    assert any(isinstance(e, MemoryWorkDone) and e.memo == memo for e in events)
    await turns(session, 4)
    assert [len(p.highlights) for p in await session.book.pages()] == [2, 2]


async def test_a_roleplay_reply_is_rejected_and_leaves_a_gap_that_a_retry_fills(store: Store) -> None:
    summarizer = ScriptedBackend([["*smiles warmly* Oh, what a lovely day at the bakery!"]])
    events: list[MemoryEvent] = []
    session = await open_session(store, summarizer, events)
    await turns(session, 4)
    [gap] = await session.book.pages()
    assert gap.gap and gap.highlights == () and "roleplay" in (gap.reason or "")
    failed = [e for e in events if isinstance(e, MemoryWorkFailed)]
    assert failed and f"no memo for messages {gap.span}" in failed[0].reason
    await turns(session, 1)  # the chat goes on; the same batch is not retried at every turn
    assert len(summarizer.calls) == 1
    summarizer.add([GOOD])
    [filled] = await session.book.retry_gaps()
    assert filled.id == gap.id and filled.status is MemoStatus.OK and len(filled.highlights) == 2
    history = await store.memos.history(session.chat.id)
    assert [v.status for v in history] == [MemoStatus.FAILED, MemoStatus.OK]


@pytest.mark.parametrize("answer", [[""], ["I'm sorry, but I can't help with that request."], ["Hello Kai! How are you today?"]])
async def test_empty_refusing_and_chatty_answers_are_not_memos(store: Store, answer: list[str]) -> None:
    session = await open_session(store, ScriptedBackend([answer]))
    await turns(session, 4)
    [gap] = await session.book.pages()
    assert gap.gap and gap.reason


async def test_a_failing_summarizer_never_breaks_the_chat_and_the_gap_can_be_retried(store: Store) -> None:
    down = BackendUnreachable("The summarizer at http://127.0.0.1:9 is not answering.", "Start it.")
    summarizer = ScriptedBackend([down])
    session = await open_session(store, summarizer)
    await turns(session, 4)
    assert len(await session.transcript()) == 9
    [gap] = await session.book.pages()
    assert gap.gap and "not answering" in (gap.reason or "")
    assert session.memory_status.startswith("memo gap: no memo for messages #")
    summarizer.add(down)
    [still] = await session.book.retry_gaps()
    assert still.gap
    summarizer.add([GOOD])
    [filled] = await session.book.retry_gaps()
    assert not filled.gap


async def test_restoring_a_branch_rewinds_the_memo_book(store: Store) -> None:
    answers = iter(["【Highlight 1】: On the first road Kai found a silver key.",
                    "【Highlight 1】: On the second road Mika lost her red scarf."])
    session = await open_session(store, ScriptedBackend(default=lambda m: [next(answers)]))
    await turns(session, 2)
    await session.tree.save_branch("fork")
    await turns(session, 2)
    assert [m.highlights for m in await session.book.pages()] == [("On the first road Kai found a silver key.",)]
    _, saved = await session.tree.restore_branch("fork")
    assert saved is not None and await session.book.pages() == []
    await turns(session, 2, "Another way")
    assert [m.highlights for m in await session.book.pages()] == [("On the second road Mika lost her red scarf.",)]
    await session.tree.restore_branch(saved.name)
    assert [m.highlights for m in await session.book.pages()] == [("On the first road Kai found a silver key.",)]


async def test_a_memo_made_late_is_anchored_to_its_batch_not_to_where_the_user_went(store: Store) -> None:
    session = await open_session(store, ScriptedBackend(default=lambda m: [GOOD]))
    await turns(session, 3)
    async for _ in session.send("the eighth message"):
        pass
    # The user swipes the reply before the memo work ran: the memo still belongs to both swipes.
    async for _ in session.regenerate():
        pass
    await session.wait_for_memory_work()
    [memo] = await session.book.pages()
    assert memo.anchor_depth == 7
    await session.tree.select_swipe(1)
    assert [m.id for m in await session.book.pages()] == [memo.id]


def prompt_of(backend: ScriptedBackend) -> str:
    return "\n".join(str(m["content"]) for m in backend.calls[-1]["messages"])


async def test_an_edited_memo_and_a_memo_you_wrote_reach_the_next_prompt(store: Store) -> None:
    chat = ScriptedBackend(default=lambda m: ["*nods*"])
    session = await open_session(store, ScriptedBackend(default=lambda m: [GOOD]), chat=chat, memo_recent_messages=4, memo_batch=4)
    await turns(session, 5)  # depth 10: batches 0-3 and 4-7 have memos; the raw window starts at depth 4
    system = chat.calls[-1]["messages"][0]["content"]
    assert "## Memo book" in system and "Kinako" in system
    first = (await session.book.pages())[0]
    edited = await session.book.edit(first.id, "- Kai named the bakery cat Daifuku, not Kinako.\n- Mika gave Kai a whisk.")
    assert edited.byline == "edited by you" and edited.version_id != first.version_id
    written = await session.book.write("Kai and Mika once drove to the sea in a borrowed van.")
    assert written.author is MemoAuthor.USER and written.byline == "written by you"
    await turns(session, 1)
    prompt = prompt_of(chat)
    assert "Kai named the bakery cat Daifuku, not Kinako." in prompt
    assert "drove to the sea in a borrowed van" in chat.calls[-1]["messages"][-1]["content"]  # the volatile tail
    hidden = await session.book.set_hidden(first.id, True)
    await turns(session, 1)
    assert "Daifuku" not in prompt_of(chat) and hidden.hidden
    history = [v.highlights for v in await store.memos.history(session.chat.id) if v.id == first.id]
    assert history[0] == first.highlights, "the original is kept"


async def test_the_summary_style_is_unchanged_and_makes_no_memos(store: Store) -> None:
    summarizer = ScriptedBackend(default=lambda m: ["Kai and Mika talked at length about the bakery and she seemed glad of it."])
    session = await open_session(store, summarizer, memory_style="summary")
    await turns(session, 4)
    assert await session.book.pages() == []
    assert session.last_prompt is not None and [layer.name for layer in session.last_prompt.layers] == ["card", "memory", "window", "tail"]


async def test_the_memos_style_keeps_the_prefix_between_batches(store: Store) -> None:
    chat = ScriptedBackend(default=lambda m: ["*nods*"])
    session = await open_session(store, ScriptedBackend(default=lambda m: [GOOD]), chat=chat)
    await turns(session, 20)
    prompts: list[list[ChatMessage]] = [call["messages"] for call in chat.calls]
    assert session.last_prompt is not None and "memos" in [layer.name for layer in session.last_prompt.layers]
    # Between two moves of the window, a turn only appends: the previous prompt's
    # messages (all but its volatile tail) start the next one.
    kept = sum(1 for a, b in zip(prompts, prompts[1:]) if b[: len(a) - 1] == a[:-1])
    assert kept >= len(prompts) // 2
    assert 16 <= len(prompts[-1]) - 2 <= 24  # 8 to 12 raw pairs, no summary


async def test_the_both_style_keeps_the_summary_and_adds_the_memos_before_its_window(store: Store) -> None:
    def summarizer(messages: list[ChatMessage]) -> list[str]:
        if "Journey Highlights" in str(messages[0]["content"]):
            return [GOOD]
        return ["Kai and Mika talked at length about the bakery, and she seemed glad of the company."]

    chat = ScriptedBackend(default=lambda m: ["*nods*"])
    session = await open_session(store, ScriptedBackend(default=summarizer), chat=chat, memory_style="both")
    await turns(session, 20)  # depth 40: the summary has moved its window past a few batches
    assert len(await session.book.pages()) == 5
    system = chat.calls[-1]["messages"][0]["content"]
    assert "## Recent Conversation Summary" in system and "## Memo book" in system
    assert system.index("## Recent Conversation Summary") < system.index("## Memo book")
    state = await session.memory()
    prompt = session.last_prompt
    assert prompt is not None and [layer.name for layer in prompt.layers] == ["card", "memory", "memos", "window", "passages", "tail"]
    assert state.summary is not None and state.summary.covers_to_id is not None


@pytest.mark.parametrize("answer", [
    ["*smiles warmly* Oh, what a lovely day at the bakery!"],  # no highlights at all
    [GOOD],  # highlights of another story: none of this batch's names
])
async def test_a_memo_the_model_spoils_keeps_the_batchs_own_words_and_says_so(store: Store, answer: list[str]) -> None:
    from omoide.memory.events import MemoryNotice

    summarizer = ScriptedBackend(default=lambda m: answer)
    events: list[MemoryEvent] = []
    session = await open_session(store, summarizer, events)
    await turns(session, 1, "My sister Hanako moved to Sapporo last spring.")
    await turns(session, 3)
    [memo] = await session.book.pages()
    assert not memo.gap
    text = " ".join(memo.highlights)
    assert "Hanako" in text and "Sapporo" in text and "Kinako" not in text
    assert memo.highlights[0].startswith("Kai said: Their sister Hanako")  # word for word, its date kept by the memo
    notices = [e.note for e in events if isinstance(e, MemoryNotice)]
    assert any(f"memo for messages {memo.span}" in n and "kept the sentences" in n for n in notices), notices
