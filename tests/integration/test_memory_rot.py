"""Summaries and memos that do not rot: once a message inside a summarised
span or a memo's batch is edited or swiped, the memory made from the old text
is not what the new path sees, and the memory made on the new path reads
nothing of the old one. Real SQLite, a real session; the chat model and the
summarizer are one scripted backend (memory work continues the chat's
prompt), and the memory work copies what it is given word for word, so any
memory made from old text carries the old marker."""

from __future__ import annotations

import asyncio
import re
from typing import Any

from omoide.characters.model import Character
from omoide.chat.events import ReplyFinished
from omoide.chat.session import ChatSession
from omoide.config.settings import Settings
from omoide.llm.base import ChatMessage, is_memory_task
from omoide.store import Store
from tests.scripted import ScriptedBackend

MIKA = Character(id="mika", name="Mika", first_message="*waves* Hi, {{user}}!")


def text_of(messages: list[ChatMessage]) -> str:
    return "\n".join(str(m.get("content", "")) for m in messages)


class Faithful:
    """Chat replies echo the user's words (or say what the test sets for the next
    reply); memory work copies its material, and every marker word (ALPHA,
    OLDTIN...) anywhere in its request: a model that draws on whatever context
    it is given."""

    def __init__(self) -> None:
        self.next_reply = ""
        self.hold: asyncio.Event | None = None
        self.held = asyncio.Event()

    def __call__(self, messages: list[ChatMessage]) -> list[Any]:
        last = str(messages[-1].get("content", ""))
        if is_memory_task(messages[-1]) or "speakers" not in messages[0]:
            material = re.split(r"\n(?:Conversation|Messages):\n", last)[-1].replace("\n", " ")
            markers = " ".join(dict.fromkeys(re.findall(r"\b[A-Z]{5,}\b", text_of(messages))))
            material = f"{material} Also in mind: {markers}." if markers else material  # a whole sentence: parts are cut to one
            wait: list[Any] = []
            if self.hold is not None and "Journey Highlights" in last:
                self.held.set()
                wait = [self.hold]
            if "Journey Highlights" in last:
                return [*wait, f"【Highlight 1】: They went over all of it: {material[-380:]}"]
            return [*wait, f"She and they went over all of it: {material}"]
        heard = next(str(m.get("content", "")) for m in reversed(messages) if m["role"] == "user")
        reply, self.next_reply = self.next_reply, ""
        return [reply or f"Mika nods at: {heard.splitlines()[-1][-60:]}"]


async def say(session: ChatSession, text: str) -> None:
    async for _ in session.send(text):
        pass
    await session.wait_for_memory_work()


async def seen_after(backend: ScriptedBackend, since: int) -> list[str]:
    return [text_of(call["messages"]) for call in backend.calls[since:]]


async def test_an_edit_inside_the_summarised_span_leaves_the_old_summary_behind(store: Store) -> None:
    script = Faithful()
    backend = ScriptedBackend(default=script)
    session = await ChatSession.open(store, MIKA, Settings(user_name="Kai", recent_messages=4, summary_threshold=6,
                                                           memory_style="both", memo_batch=4, memo_recent_messages=4), backend)
    await say(session, "Hello.")
    await say(session, "My bike is called ALPHA.")
    for i in range(6):
        await say(session, f"Small talk {i}.")
    memory = await session.memory()
    assert memory.summary is not None and "ALPHA" in memory.summary.content
    assert any("ALPHA" in " ".join(m.highlights) for m in memory.memos)
    named = next(m for m in await session.transcript() if "ALPHA" in m.content and m.role.value == "user")
    while (await session.head()).depth >= named.depth:  # type: ignore[union-attr]
        await session.tree.undo()  # back to before the message, as /undo does
    since = len(backend.calls)
    await say(session, "My bike is called OMEGA.")  # the message said again, otherwise
    for i in range(8):
        await say(session, f"More talk {i}.")
    memory = await session.memory()
    assert memory.summary is not None and "OMEGA" in memory.summary.content and "ALPHA" not in memory.summary.content
    assert any("OMEGA" in " ".join(m.highlights) for m in memory.memos)
    stale = [text for text in await seen_after(backend, since) if "ALPHA" in text]
    assert not stale, "a prompt or memory request on the new path read memory made from the old text"


async def test_a_swiped_reply_inside_a_memos_batch_leaves_its_memo_behind(store: Store) -> None:
    script = Faithful()
    backend = ScriptedBackend(default=script)
    session = await ChatSession.open(store, MIKA, Settings(user_name="Kai", memory_style="memos", memo_batch=4,
                                                           memo_recent_messages=4), backend)
    script.next_reply = "The kettle's name is KETTLEWORTH."
    await say(session, "Does the kettle have a name?")  # depths 1-2
    await say(session, "Lovely.")  # 3-4: the batch of depths 0-3 is full
    old = (await session.book.pages())[0]
    assert "KETTLEWORTH" in " ".join(old.highlights)
    await session.tree.undo()  # back to the kettle's reply
    since = len(backend.calls)
    script.next_reply = "The kettle's name is BRAMBLE."
    async for event in session.regenerate():  # a swipe of the reply inside the batch
        if isinstance(event, ReplyFinished):
            assert "BRAMBLE" in event.message.content
    await session.wait_for_memory_work()
    for i in range(6):
        await say(session, f"Tea talk {i}.")
    pages = await session.book.pages()
    assert old.id not in {m.id for m in pages}
    assert any("BRAMBLE" in " ".join(m.highlights) for m in pages)
    assert not any("KETTLEWORTH" in text for text in await seen_after(backend, since))
    # The old path still has its memo: going back there (a branch) finds it as it was.
    assert "KETTLEWORTH" in " ".join((await store.memos.get(old.id)).highlights)


async def test_memory_work_under_way_during_a_swipe_reads_only_its_own_path(store: Store) -> None:
    """A memo request is held while the user swipes the reply that ended its
    turn; the summary the same job makes next must continue the prompt of the
    path it works on, not the swipe's (which the job's memory would then carry
    onto the old path), and the swipe's path must not see that memory."""
    script = Faithful()
    backend = ScriptedBackend(default=script)
    session = await ChatSession.open(store, MIKA, Settings(user_name="Kai", recent_messages=4, summary_threshold=7,
                                                           memory_style="both", memo_batch=4, memo_recent_messages=4), backend)
    for i in range(3):
        await say(session, f"Warm-up {i}.")
    script.hold, script.held = asyncio.Event(), asyncio.Event()
    script.next_reply = "I keep the recipe in the OLDTIN."
    async for _ in session.send("Where is the recipe?"):  # depth 8: a memo and a summary are due
        pass
    await asyncio.wait_for(script.held.wait(), 30)
    hold, script.hold = script.hold, None
    script.next_reply = "I keep the recipe in the NEWJAR."
    async for _ in session.regenerate():
        pass
    hold.set()
    await asyncio.wait_for(session.wait_for_memory_work(), 60)
    summaries = [text_of(c["messages"]) for c in backend.calls if "Summarize the following" in text_of(c["messages"])
                 or "Continue the running summary" in text_of(c["messages"])]
    # Neither reply is in the span summarized: no summary request shows either (memory work
    # covers exactly its span), so the swipe's prompt cannot reach the old path's summary.
    assert summaries and not any("OLDTIN" in s or "NEWJAR" in s for s in summaries), "a summary read past its span"
    memory = await session.memory()
    assert memory.summary is not None and "OLDTIN" not in memory.summary.content
    new_path = " ".join([memory.summary.content, *(h for m in await session.book.pages() for h in m.highlights),
                         text_of(session.last_prompt.messages if session.last_prompt else [])])
    assert "OLDTIN" not in new_path, "the swipe's path reads memory made from the swiped reply"
