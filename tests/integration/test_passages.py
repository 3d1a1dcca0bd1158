"""Memories that come to mind: a fact said long ago, out of the window and
covered by the summary, comes back word for word with its date when the latest
messages touch it, through ChatSession on a real SQLite file, with the
scripted model capturing every prompt."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from omoide.characters.model import Character
from omoide.chat.session import ChatSession
from omoide.config.settings import Settings
from omoide.domain.chat import Message, Role
from omoide.llm.base import ChatMessage, is_memory_task
from omoide.llm.stamps import stamp
from omoide.memory.passages import HEADING, estimate_tokens
from omoide.store import Store
from tests.scripted import ScriptedBackend

MIKA = Character(id="mika", name="Mika", first_message="*waves* Hi!", description="{{char}} keeps a small bakery.")
FACT = "My cat is called Biscuit-1001 and she sleeps on the radiator all winter."
FILLER = "Line {i}: the tea was warm and the tram was late."


def settings(**kw: object) -> Settings:
    return Settings(**{"user_name": "Kai", "context_size": 8192, "max_tokens": 200, "summary_threshold": 10_000, **kw})  # type: ignore[arg-type]


def ticking(start: datetime) -> Callable[[], datetime]:
    moments = iter(start + timedelta(minutes=i) for i in range(100_000))
    return lambda: next(moments)


async def story(store: Store, *, fillers: int = 200, fact: str = FACT) -> tuple[int, Message]:
    """A chat whose user said `fact` `fillers` messages ago; a summary covers all
    but the last four messages, so the fact is out of the window."""
    store.clock = ticking(datetime(2026, 3, 4, 19, 3, tzinfo=UTC))
    chat = await store.chats.create("mika", greeting="*waves* Hi!")
    said = await store.messages.add(chat.id, chat.head_id, Role.USER, fact)
    head = await store.messages.add(chat.id, said.id, Role.ASSISTANT, "How lovely.")
    for i in range(fillers):
        head = await store.messages.add(chat.id, head.id, Role.USER if i % 2 else Role.ASSISTANT, FILLER.format(i=i))
    await store.memory.add_summary(chat.id, head.id, content="Kai and Mika chatted over tea.", covers_to_id=head.id, diary_to_id=None)
    for i in range(4):
        head = await store.messages.add(chat.id, head.id, Role.USER if i % 2 else Role.ASSISTANT, f"Recent {i}: the bread rose.")
    return chat.id, said


async def told_long_ago(store: Store, lines: list[tuple[Role, str]]) -> int:
    """A chat that opens with `lines`, then 200 fillers a summary covers: the lines are far out of the window."""
    chat = await store.chats.create("mika", greeting="*waves* Hi!")
    head = chat.head_id
    for role, text in lines:
        head = (await store.messages.add(chat.id, head, role, text)).id
    for i in range(200):
        head = (await store.messages.add(chat.id, head, Role.USER if i % 2 else Role.ASSISTANT, FILLER.format(i=i))).id
    await store.memory.add_summary(chat.id, head, content="Kai and Mika chatted over tea.", covers_to_id=head, diary_to_id=None)
    return chat.id


async def turn(session: ChatSession, text: str) -> None:
    [e async for e in session.send(text)]


def chat_calls(backend: ScriptedBackend) -> list[list[ChatMessage]]:
    """The chat turns' prompts (not memory or world work, which may run alongside)."""
    return [c["messages"] for c in backend.calls if "speakers" in c["messages"][0] and not is_memory_task(c["messages"][-1])]


def prompt_text(backend: ScriptedBackend) -> str:
    return "\n".join(str(m.get("content", "")) for m in chat_calls(backend)[-1])


async def test_a_fact_two_hundred_messages_back_comes_to_mind_with_its_date_when_touched(store: Store) -> None:
    chat_id, said = await story(store)
    backend = ScriptedBackend(default=lambda m: ["Mm."])
    session = await ChatSession.open(store, MIKA, settings(), backend, chat_id=chat_id)

    await turn(session, "What a lovely evening for a walk.")
    assert "Biscuit" not in prompt_text(backend), "nothing in the latest messages touches the fact"

    await turn(session, "I bought a new collar for the cat today.")
    messages = chat_calls(backend)[-1]
    line = f"{stamp(said.created_at)} Kai: {FACT}"
    closing = str(messages[-1]["content"])
    assert closing.startswith(HEADING) and line in closing, closing
    assert all(line not in str(m.get("content", "")) for m in messages[:-1]), "only after the window, never before it"
    prompt = session.last_prompt
    assert prompt is not None
    names = [layer.name for layer in prompt.layers]
    assert names.index("window") < names.index("passages") < names.index("tail")
    [why] = [w for w in prompt.passages if "Kai" in w and "cat" in w]
    assert "matched cat" in why and "relevance" in why and "importance" in why and "recency" in why
    assert [layer.tokens for layer in prompt.layers if layer.name == "passages"][0] > 0


async def test_amnesia_hides_the_passages_and_off_brings_them_back(store: Store) -> None:
    chat_id, _ = await story(store, fillers=40)
    backend = ScriptedBackend(default=lambda m: ["Mm."])
    session = await ChatSession.open(store, MIKA, settings(), backend, chat_id=chat_id)
    assert await session.user.set_amnesia(["passages"]) == ("passages",)
    await turn(session, "Is the cat on the radiator again?")
    assert "Biscuit" not in prompt_text(backend)
    assert session.last_prompt is not None and "passages" not in [layer.name for layer in session.last_prompt.layers]
    await session.user.set_amnesia([])
    await turn(session, "Is the cat on the radiator again?")
    assert "Biscuit-1001" in prompt_text(backend)


async def test_memory_style_none_stays_a_window_only_baseline(store: Store) -> None:
    chat_id, _ = await story(store, fillers=40)
    backend = ScriptedBackend(default=lambda m: ["Mm."])
    session = await ChatSession.open(store, MIKA, settings(memory_style="none", recent_messages=4), backend, chat_id=chat_id)
    await turn(session, "Is the cat on the radiator again?")
    assert "Biscuit" not in prompt_text(backend)


async def test_passages_stay_within_their_token_budget_and_count(store: Store) -> None:
    chat_id, _ = await story(store, fillers=60)
    head = (await store.chats.get(chat_id)).head_id
    assert head is not None
    for i in range(3):  # more cat lines than fit, out of the window under a new summary
        head = (await store.messages.add(chat_id, head, Role.USER, f"The cat knocked over vase number {i} " + "again " * 30)).id
    await store.memory.add_summary(chat_id, head, content="More tea.", covers_to_id=head, diary_to_id=None)
    head = (await store.messages.add(chat_id, head, Role.ASSISTANT, "Oh dear.")).id
    backend = ScriptedBackend(default=lambda m: ["Mm."])
    session = await ChatSession.open(store, MIKA, settings(recall_passages=3, recall_passages_tokens=120), backend, chat_id=chat_id)
    await turn(session, "Where is the cat now?")
    closing = str(chat_calls(backend)[-1][-1]["content"])
    shown = closing.split("\n\n")[0]
    assert shown.startswith(HEADING)
    lines = shown.splitlines()[2:]
    assert 1 <= len(lines) <= 3
    assert estimate_tokens(HEADING) + sum(estimate_tokens(line) + 1 for line in lines) <= 120

    again = await ChatSession.open(store, MIKA, settings(recall_passages=1), backend, chat_id=chat_id)
    await turn(again, "Where is the cat now?")
    assert len(str(chat_calls(backend)[-1][-1]["content"]).split("\n\n")[0].splitlines()[2:]) == 1


async def test_a_fact_said_on_an_abandoned_branch_does_not_come_to_mind_after_restore(store: Store) -> None:
    chat_id, said = await story(store, fillers=20)
    backend = ScriptedBackend(default=lambda m: ["Mm."])
    session = await ChatSession.open(store, MIKA, settings(), backend, chat_id=chat_id)
    await session.tree.save_branch("plain")
    await turn(session, "By the way, my parrot is called Pistachio-77.")
    for i in range(6):
        await turn(session, f"Small talk {i} about bread.")
    await turn(session, "Does the parrot like you?")
    assert "Pistachio-77" in prompt_text(backend), "on its own branch the fact is in the prompt"

    await session.tree.restore_branch("plain")
    await turn(session, "Does the parrot like you?")
    assert "Pistachio-77" not in prompt_text(backend)


async def test_what_a_matching_line_led_to_two_replies_on_comes_to_mind(store: Store) -> None:
    """The answer often sits two lines after the line the question's words find:
    "opening night is tomorrow" -> "the stage looks lovely" -> "I'm terrified"."""
    store.clock = ticking(datetime(2026, 3, 4, 19, 3, tzinfo=UTC))
    chat_id = await told_long_ago(store, [
        (Role.USER, "The theatre's opening night is tomorrow, I'm in the chorus."),
        (Role.ASSISTANT, "The stage looks lovely in your photo."),
        (Role.USER, "Thanks! Honestly I'm terrified-4471 of forgetting my lines."), (Role.ASSISTANT, "You will be wonderful.")])
    backend = ScriptedBackend(default=lambda m: ["Mm."])
    session = await ChatSession.open(store, MIKA, settings(), backend, chat_id=chat_id)

    await turn(session, "Do you remember the theatre?")

    closing = str(chat_calls(backend)[-1][-1]["content"])
    assert "terrified-4471" in closing, closing
    assert closing.index("opening night") < closing.index("looks lovely") < closing.index("terrified-4471")
    prompt = session.last_prompt
    assert prompt is not None
    [why] = [w for w in prompt.passages if "03/04 19:06" in w]  # the third line, as /prompt explains it
    assert "follows a line that matched theatre" in why, prompt.passages


async def test_a_day_asked_about_brings_back_what_was_said_on_it_and_later_lines_that_name_it(store: Store) -> None:
    """"What did I do on 2 March?": what was said that day comes back, and so does
    "Three days ago I went to the ceramics fair", said on the 5th, which shares no word
    with the question; another line of the 5th does not."""
    times = iter([datetime(2026, 3, 2, 11, 59, tzinfo=UTC),  # the greeting
                  datetime(2026, 3, 2, 12, 0, tzinfo=UTC), datetime(2026, 3, 2, 12, 1, tzinfo=UTC),
                  datetime(2026, 3, 5, 12, 0, tzinfo=UTC), datetime(2026, 3, 5, 12, 1, tzinfo=UTC),
                  datetime(2026, 3, 5, 12, 2, tzinfo=UTC), datetime(2026, 3, 5, 12, 3, tzinfo=UTC)])
    later = ticking(datetime(2026, 3, 12, 12, 0, tzinfo=UTC))
    store.clock = lambda: next(times, None) or later()
    chat_id = await told_long_ago(store, [
        (Role.USER, "I spent the whole afternoon at the pottery-7311 studio."), (Role.ASSISTANT, "Sounds messy."),
        (Role.USER, "Three days ago I also went to the ceramics fair-5120, I forgot to say."), (Role.ASSISTANT, "Busy week."),
        (Role.USER, "The museum-9902 was closed today."), (Role.ASSISTANT, "What a pity.")])
    backend = ScriptedBackend(default=lambda m: ["Mm."])
    session = await ChatSession.open(store, MIKA, settings(recall_passages_meaning=False), backend, chat_id=chat_id)
    session.clock = ticking(datetime(2026, 3, 20, 12, 0, tzinfo=UTC))

    await turn(session, "What did I do on 2 March?")

    closing = str(chat_calls(backend)[-1][-1]["content"])
    assert "pottery-7311" in closing and "fair-5120" in closing, closing
    assert "museum-9902" not in closing
    prompt = session.last_prompt
    assert prompt is not None
    [why] = [w for w in prompt.passages if "03/05 12:00" in w]
    assert "a day asked about" in why, prompt.passages


async def test_a_line_comes_with_the_question_asked_back_about_it_and_its_answer(store: Store) -> None:
    """What a story tells of an event is often the answer to "how was it?", which
    shares none of its words: with room for one passage, the camping line brings
    the question asked back about it and the answer after that."""
    store.clock = ticking(datetime(2026, 3, 4, 19, 3, tzinfo=UTC))
    chat_id = await told_long_ago(store, [
        (Role.ASSISTANT, "I took my family camping in the hills last week."),
        (Role.USER, "Sounds great! How was it?"),
        (Role.ASSISTANT, "We roasted marshmallows-3302 and hiked to the top for the view.")])
    backend = ScriptedBackend(default=lambda m: ["Mm."])
    session = await ChatSession.open(store, MIKA, settings(recall_passages=1), backend, chat_id=chat_id)

    await turn(session, "Do you remember the camping?")

    closing = str(chat_calls(backend)[-1][-1]["content"])
    assert closing.index("family camping") < closing.index("How was it?") < closing.index("marshmallows-3302"), closing


async def test_a_line_that_names_what_a_passage_names_comes_too_unless_many_lines_name_it(store: Store) -> None:
    """Where she moved from is said in another line, months apart, that shares
    no word with the question but "home country" with the line that matches it:
    that line comes to mind too, and /prompt says why. A pair many lines hold
    names nothing in particular and brings nothing."""
    store.clock = ticking(datetime(2026, 3, 4, 19, 3, tzinfo=UTC))
    told = [(Role.USER, "I moved here four years ago, from my home country, right after the breakup."),
            (Role.ASSISTANT, "That was brave of you."),
            *[(Role.USER if i % 2 else Role.ASSISTANT, FILLER.format(i=i)) for i in range(40)],
            (Role.USER, "This necklace was a gift from my grandma in my home country, Vastmark-4410.")]
    chat_id = await told_long_ago(store, told)
    backend = ScriptedBackend(default=lambda m: ["Mm."])
    session = await ChatSession.open(store, MIKA, settings(), backend, chat_id=chat_id)

    await turn(session, "Where did I move from, years back?")

    assert "Vastmark-4410" in str(chat_calls(backend)[-1][-1]["content"])
    prompt = session.last_prompt
    assert prompt is not None
    [why] = [w for w in prompt.passages if "names" in w]
    assert 'names "home country" as a better passage does' in why, prompt.passages

    crowded = await told_long_ago(store, [*told, *[(Role.ASSISTANT, f"Tea {i} from the home country shop.") for i in range(5)]])
    session = await ChatSession.open(store, MIKA, settings(), backend, chat_id=crowded)
    await turn(session, "Where did I move from, years back?")
    assert session.last_prompt is not None and not [w for w in session.last_prompt.passages if "names" in w]
