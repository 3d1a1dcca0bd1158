"""Knowledge boundaries: a secret told to Suzune alone reaches no prompt of
another character until it is told in that character's presence.

Every request any backend receives is attributed to the character it is for
(a chat turn: its speaker; memory work continuing a chat's prompt: that
prompt's speaker; a summary, memo or diary request: the character it is
written for; a world step: the character whose memory it writes). The memory
work here copies everything it is given, word for word, into summaries,
memos, diaries and world memory: the most a design can leak. Real SQLite,
real sessions, the paths a user takes: a one-on-one chat, `/invite`, a scene,
the end of a conversation (world passes, gossip), compression in the scene.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from omoide.characters.library import find_character
from omoide.chat.events import ReplyFinished
from omoide.chat.session import ChatSession
from omoide.config.settings import Settings
from omoide.llm.base import ChatMessage, is_memory_task
from omoide.store import Store
from omoide.world.steps import SYSTEM
from tests.scripted import ScriptedBackend

SECRET = "Reykjavik"
TOLD = f"Wren, between us: Kai applied for the observatory job in {SECRET}."

WORLD_OWNER = {
    "summary": r"(\w+) just had a conversation with",
    "memory": r"Rewrite, from scratch, what (\w+) remembers about",
    "goal": r"(\w+) just talked with",
    "descriptor": r"What (\w+) remembers about \w+:\n",
    "offscreen": r"\w+ was not part of this conversation.*?What (\w+) already remembered about",
    "offscreen_goal": r"(\w+) just heard this about",
    "global": r"Rewrite, from scratch, (\w+)'s own memories",
}
MEMORY_OWNER = [
    r"Summarize the following conversation between (\w+) and",
    r"Continue the running summary of the story between (\w+) and",
    r"memo book of a roleplay between (\w+) and",
    r"Compress the following diary entries written by (\w+)\.",
]


def text_of(messages: list[ChatMessage]) -> str:
    return "\n".join(str(m.get("content", "")) for m in messages)


def owner_of(messages: list[ChatMessage]) -> tuple[str, str]:
    """(whose request it is, what kind), read from the instruction that opens the
    request's task (standalone: its first message; continuing a chat's prompt:
    its last), never from material copied into it."""
    last = str(messages[-1].get("content", ""))
    continued = is_memory_task(messages[-1])
    if continued or "speakers" not in messages[0]:
        task = last if continued else str(messages[0].get("content", ""))
        if SYSTEM in task:  # a world step: after its one-line system message, the template for one character
            body = last.split(SYSTEM, 1)[1].lstrip() if continued else last
            for step, pattern in WORLD_OWNER.items():
                found = re.match(pattern, body, re.S)
                if found:
                    return found.group(1), f"world.{step}"
            raise AssertionError(f"a world step whose character cannot be told: {body[:300]}")
        for pattern in MEMORY_OWNER:
            found = re.search(pattern, task[:400])
            if found:
                return found.group(1), "memory work"
        raise AssertionError(f"memory work nobody can be found for: {task[:300]}")
    speakers = messages[0].get("speakers")
    assert speakers, f"a request nobody can be found for: {text_of(messages)[:300]}"
    return str(speakers[1]), "chat"


def copier(messages: list[ChatMessage]) -> list[Any]:
    """Chat turns: Suzune tells Wren when asked to; otherwise each speaker writes
    down what it just heard (Suzune only the secret and the greeting: Wren's
    diary alone fills in the scene, so Suzune's entries, written for whoever was
    there, are carried over the compression of Wren's).
    Memory work: everything it is given, copied, and any line of the whole
    request that holds a secret, wherever it stood (a model that leaks)."""
    owner, kind = owner_of(messages)
    last = str(messages[-1].get("content", ""))
    whole = text_of(messages)
    juicy = " ".join(dict.fromkeys(re.findall(rf"[^.:\n]*{SECRET}[^.\n]*\.", whole)))
    if kind.startswith("world."):
        step = kind.removeprefix("world.")
        fixed = {"goal": "Ask about the weather next time.", "descriptor": "Friend.", "offscreen_goal": "KEEP"}
        return [fixed.get(step, "They remember it all: " + " ".join([juicy, last]).replace("\n", " "))]
    if kind == "memory work":
        material = re.split(r"\n(?:Conversation|Messages|Diary):\n", last)[-1]
        material = re.sub(r"\n\n(?:Summary|Journey Highlights|Compressed diary):$", "", material.rstrip())
        body = " ".join([juicy, material]).replace("\n", " ")
        if "Journey Highlights" in last:
            return ["【Highlight 1】: They went over all of it: " + material[-300:].replace("\n", " ")
                    + (f"\n【Highlight 2】: Someone said: {juicy[:300]}" if juicy else "")]
        if "Compress the following diary" in whole:
            return ["They kept every line: " + body]
        return ["She and they talked, and they went over all of it: " + body]
    if last.startswith("(What comes back to you"):
        return [f"({owner} thinks.) " + last.replace("\n", " ")[:400]]
    heard = next(str(m.get("content", "")) for m in reversed(messages) if m["role"] == "user").splitlines()[-1][-160:]
    if "news of a job" in heard.lower():
        return ["Let me think. <recall>observatory job</recall>"]
    if owner == "Suzune" and "tell Wren" in heard:
        return [TOLD]
    if owner == "Suzune" and not any(word in heard for word in ("secret", "Evening")):
        return ["(Suzune pours.)"]
    return [f"({owner} listens.) <save_memory>{owner} heard: {heard}</save_memory>"]


def settings() -> Settings:
    return Settings(user_name="Kai", memory_style="both", recall_tool=True, recent_messages=4, summary_threshold=6, memo_batch=4,
                    memo_recent_messages=4, diary_prompt_lines=6, diary_compress_lines=6, gossip_rate=1.0, scene_seed=3,
                    world_idle_hours=0, context_size=8192, max_tokens=200)


def add_mika(home: Path) -> None:
    folder = home / "data" / "characters" / "mika"
    folder.mkdir(parents=True)
    (folder / "character.toml").write_text('name = "Mika"\ndescription = "A postman who knows everyone."\nfirst_message = "Post!"\n')


async def say(session: ChatSession, text: str, speaker: str | None = None) -> str:
    reply = ""
    async for event in session.send(text, speaker=speaker):
        if isinstance(event, ReplyFinished):
            reply = event.message.content
    await session.wait_for_memory_work()
    return reply


async def end(session: ChatSession) -> None:
    conversation = await session.end_conversation(background=False)
    result = await session.world.run(conversation.id)
    assert not result.failed, result.failed


async def test_a_secret_told_to_suzune_reaches_nobody_else_until_it_is_told_before_them(store: Store, omoide_home: Path) -> None:
    add_mika(omoide_home)
    backend = ScriptedBackend(default=copier)
    suzune, wren = find_character("suzune"), find_character("wren")

    # Wren and Kai, one on one: she knows nothing of it.
    with_wren = await ChatSession.open(store, wren, settings(), backend)
    for line in ("Morning, Wren.", "Any new maps?", "Suzune says hello.", "See you soon."):
        await say(with_wren, line)
    await end(with_wren)

    # Suzune's chat: the secret, told to her alone (Mika named too: offscreen memory).
    cafe = await ChatSession.open(store, suzune, settings(), backend)
    await say(cafe, "Evening, Suzune.")
    await say(cafe, f"A secret, Suzune: the observatory job in {SECRET}. Not a word to Wren or Mika.")
    for i in range(8):  # past the window: into the summary, the memos and Suzune's diary
        await say(cafe, f"The rain again, part {i}.")
    before = await cafe.memory()
    assert before.summary is not None and SECRET in before.summary.content
    assert any(SECRET in " ".join(m.highlights) for m in before.memos)

    # Wren comes in (mid-batch: a memo of her own for the part she saw), and the scene
    # goes on long enough for compression and memos made in it.
    await cafe.scene.invite("wren")
    # She searches her memory (the recall tool); from here on each memo's batch ends
    # on Suzune's reply, with Suzune's prompt (which holds the secret) at hand.
    await say(cafe, "Welcome, Wren. Any news of a job for anyone?", speaker="wren")
    for i in range(12):
        await say(cafe, f"Wren, tell us about the chart number {i}.", speaker="wren")
        await say(cafe, f"Suzune, another cup, round {i}?", speaker="suzune")
    await end(cafe)  # world passes for both, over a conversation that holds the secret
    await say(with_wren, "Back again, Wren.")  # her one-on-one chat, with her new world memory

    told_at = len(backend.calls)
    await say(cafe, "Suzune, tell Wren what I told you.", speaker="suzune")
    await say(cafe, "Wren, where did I apply?", speaker="wren")

    attributed = [(owner_of(call["messages"]), text_of(call["messages"])) for call in backend.calls]
    leaks = [f"{owner} ({kind}): …{text[max(text.find(SECRET) - 120, 0):text.find(SECRET) + 40]}…"
             for (owner, kind), text in attributed[:told_at] if owner != "Suzune" and SECRET in text]
    assert not leaks, "the secret reached another character's prompt:\n" + "\n".join(leaks)

    # Every path above was exercised, and the secret stayed where it belongs.
    kinds = {(owner, kind) for (owner, kind), _ in attributed[:told_at]}
    for expected in [("Wren", "chat"), ("Wren", "world.summary"), ("Wren", "world.global"), ("Wren", "memory work"),
                     ("Suzune", "memory work"), ("Suzune", "world.summary"), ("Wren", "world.offscreen")]:
        assert expected in kinds, f"{expected} never ran: the test did not exercise it"
    assert any("on Wren's mind" in text for (owner, kind), text in attributed[:told_at] if (owner, kind) == ("Wren", "chat"))
    summaries = await store.db.all("SELECT owner, content FROM summaries WHERE owner = 'wren'")
    assert summaries and not any(SECRET in r[1] for r in summaries)
    memos = await store.db.all("SELECT owner FROM memos WHERE owner = 'wren'")
    assert memos, "no memo of Wren's own for the batch she saw only part of"
    assert SECRET in (await store.world.view("suzune")).about("user:Kai").memory
    wren_world = await store.world.view("wren")
    assert SECRET not in str(wren_world.global_memory) and SECRET not in wren_world.about("user:Kai").memory
    assert any(SECRET in text_of(c["messages"]) for c in backend.calls[told_at:] if owner_of(c["messages"]) == ("Wren", "chat")), \
        "told in her presence, Wren still does not have it: the test could not see a leak either"
    asked = [c["messages"] for c in backend.calls if owner_of(c["messages"]) == ("Wren", "chat")][-1]
    assert f"Suzune: {TOLD}" in text_of(asked)  # second-hand, with its source
