"""The prompt assembly: golden output, cache-friendly growth, the token budget."""

from __future__ import annotations

import asyncio

import os
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from omoide.characters.model import Character
from omoide.domain.chat import DiaryAuthor, DiaryEntry, MemoryState, Message, Role, Summary
from omoide.memory.passage import Passage
from omoide.memory.prompt.fit import count_prompt, fit
from omoide.memory.prompt.layers import assemble
from omoide.memory.prompt.model import PromptContext, render

GOLDEN = Path(__file__).parent / "golden" / "prompt.txt"
T0 = datetime(2026, 4, 1, 22, 15, tzinfo=UTC)

SAKURA = Character(
    id="sakura",
    name="Sakura",
    description="{{char}} runs a small café by the station. She teases {{user}} but cares.",
    personality="Sharp-tongued, secretly warm.",
    scenario="Late evening; the café is about to close.",
    first_message="*wipes the counter* We're closing, {{user}}.",
    example_dialogue="{{user}}: Hi\n{{char}}: *glances up* ...You again.",
    post_history_instructions="Keep replies under 80 words.",
)


def msg(i: int, role: Role, text: str, minutes: int) -> Message:
    return Message(id=i, chat_id=1, parent_id=i - 1 or None, role=role, content=text, created_at=T0 + timedelta(minutes=minutes), depth=i - 1)


def entry(i: int, text: str, author: DiaryAuthor = DiaryAuthor.CHARACTER) -> DiaryEntry:
    return DiaryEntry(id=i, chat_id=1, message_id=1, content=text, author=author, created_at=T0)


def fixed_state(n: int = 4) -> MemoryState:
    window = [msg(i, Role.USER if i % 2 == 0 else Role.ASSISTANT, f"message {i}", i) for i in range(1, n + 1)]
    return MemoryState(
        summary=Summary(id=1, chat_id=1, anchor_id=1, covers_to_id=None, diary_to_id=1,
                        content="He found the café she mentioned and liked the matcha latte.", created_at=T0),
        stable_diary=[entry(1, "He remembered my birthday. I didn't expect that.")],
        new_diary=[entry(2, "He asked about my novel. Nobody asks about that.")],
        window=window,
    )


def ctx(**kw) -> PromptContext:
    base = dict(character=SAKURA, user_name="Kai", user_persona="A regular who works late.", now=T0 + timedelta(days=1), tz=UTC)
    base.update(kw)
    return PromptContext(**base)


def test_golden_prompt_is_byte_for_byte_stable() -> None:
    text = render(assemble(ctx(), fixed_state()).messages)
    if os.environ.get("OMOIDE_UPDATE_GOLDEN"):
        GOLDEN.write_text(text, encoding="utf-8")
    assert text == GOLDEN.read_text(encoding="utf-8")


def test_layers_run_from_stable_to_volatile() -> None:
    prompt = assemble(ctx(), fixed_state())
    system, *window, tail = prompt.messages
    assert system["role"] == "system" and tail["role"] == "system"
    assert system["content"].index("Sakura runs a small café") < system["content"].index("## Diary")
    assert system["content"].index("## Diary") < system["content"].index("## Recent Conversation Summary")
    # The character's lines carry no stamp of their own (the server caches each as the model wrote it), the user's do.
    assert [m["content"] for m in window][:2] == ["message 1", "[04/01 22:17] message 2"]
    assert "Current date and time: Thursday 02 April 2026, 22:15." in tail["content"]
    assert "Nobody asks about that" in tail["content"] and "Nobody asks" not in system["content"]
    assert tail["content"].endswith("Keep replies under 80 words.")


def test_macros_are_replaced_and_creator_notes_never_appear() -> None:
    character = Character(id="x", name="Ann", nickname="Annie", description="{{char}} likes {{user}}.", creator_notes="SECRET NOTE")
    text = render(assemble(ctx(character=character), MemoryState(summary=None)).messages)
    assert "Annie likes Kai." in text
    assert "{{" not in text and "SECRET NOTE" not in text


def test_between_compressions_each_turn_only_appends() -> None:
    for n in range(2, 12):
        before = assemble(ctx(), fixed_state(n)).messages
        after = assemble(ctx(now=T0 + timedelta(days=2)), fixed_state(n + 2)).messages
        previous_without_tail = render(before[:-1])
        assert render(after).startswith(previous_without_tail)


async def words(messages: list) -> int:  # type: ignore[type-arg]
    """A stand-in tokenizer over a whole prompt: a word a token, two a message of framing."""
    return sum(len((m.get("content") or "").split()) + 2 for m in messages) + 1


def run(awaitable):  # type: ignore[no-untyped-def]
    return asyncio.run(awaitable)


@settings(max_examples=60, deadline=None)
@given(n=st.integers(min_value=1, max_value=60), budget=st.integers(min_value=150, max_value=2000), size=st.integers(1, 80))
def test_the_budget_is_never_exceeded(n: int, budget: int, size: int) -> None:
    state = fixed_state(n)
    state = MemoryState(
        summary=state.summary, stable_diary=state.stable_diary, new_diary=state.new_diary,
        window=[msg(m.id, m.role, " ".join(["word"] * size), m.id) for m in state.window],
    )
    prompt = run(fit(ctx(), state, words, budget))
    full = run(count_prompt(assemble(ctx(), state), words))
    assert prompt.total_tokens <= budget
    assert prompt.total_tokens == run(words(prompt.messages))
    assert sum(layer.tokens for layer in prompt.layers) == prompt.total_tokens
    if full.total_tokens <= budget:
        assert prompt.dropped == [] and prompt.messages == full.messages
    else:
        assert prompt.dropped
    last_window = [m for m in prompt.messages if m["role"] != "system"][-1]["content"]
    assert last_window.endswith(f"message {n}" if size == 0 else " ".join(["word"] * size))


def test_passages_cost_no_extra_count_of_the_whole_prompt_and_their_figures_add_up() -> None:
    """The passages change every turn; their figure for /prompt comes without a
    third count of the whole prompt (a request to the tokenizer each, the costliest
    part of a turn on the embedded engine), and the layers still add up."""
    said = Passage(1, T0, "Kai", "We named the bike Rocket.", ("bike",), 1.0, 0.6, 0.5, 0.8)
    whole: list[int] = []

    async def counting(messages):  # type: ignore[no-untyped-def]
        if len(messages) > 2:
            whole.append(len(messages))
        return await words(messages)

    plain = run(fit(ctx(), fixed_state(6), counting, 5000))
    without = len(whole)
    whole.clear()
    prompt = run(fit(ctx(passages=[said]), fixed_state(6), counting, 5000))
    assert len(whole) == without
    figures = {layer.name: layer.tokens for layer in prompt.layers}
    assert sum(figures.values()) == prompt.total_tokens == run(words(prompt.messages))
    closing = prompt.messages[-1]["content"]
    tail = next(layer.text for layer in prompt.layers if layer.name == "tail")
    assert figures["tail"] == len(tail.split())
    assert figures["passages"] == len(closing.split()) - len(tail.split()) + 2  # its words and the closing message's framing
    assert next(layer.tokens for layer in plain.layers if layer.name == "tail") == len(tail.split()) + 2  # alone, it has it


def test_fit_drops_oldest_messages_first_and_says_so() -> None:
    state = fixed_state(30)
    full = run(count_prompt(assemble(ctx(), state), words)).total_tokens
    prompt = run(fit(ctx(), state, words, full - 10))
    assert prompt.total_tokens <= full - 10
    assert prompt.dropped and "oldest" in prompt.dropped[0]
    assert prompt.messages[1]["content"] != "[04/01 22:16] message 1"
    assert prompt.messages[-2]["content"].endswith("message 30")


@settings(max_examples=60, deadline=None)
@given(n=st.integers(min_value=2, max_value=80), budget=st.integers(min_value=150, max_value=1500),
       kept_before=st.integers(min_value=0, max_value=90))
def test_the_fit_from_last_turns_cut_sends_the_same_prompt(n: int, budget: int, kept_before: int) -> None:
    """Wherever the last turn's cut was (a hint, even a wrong one), the fit keeps
    exactly the window messages a fit without it keeps."""
    state = fixed_state(n)
    alone = run(fit(ctx(), state, words, budget))
    hinted = run(fit(ctx(), state, words, budget, kept_before=kept_before))
    assert hinted.messages == alone.messages
    assert hinted.dropped == alone.dropped and hinted.total_tokens == alone.total_tokens


def test_a_long_window_cut_where_the_last_turn_cut_it_is_counted_a_few_times() -> None:
    """Each count is a request to the server's tokenizer with the whole prompt: a
    2,000-message window cut about where the last turn's was takes a few, not a
    bisection's dozen."""
    state = fixed_state(2000)
    counted: list[int] = []

    async def counting(messages):  # type: ignore[no-untyped-def]
        counted.append(len(messages))
        return await words(messages)

    budget = 3000
    first = run(fit(ctx(), state, counting, budget))
    kept = next(layer.messages for layer in first.layers if layer.name == "window")
    bisection = len(counted)
    counted.clear()
    grown = fixed_state(2002)  # the next turn: your message and the reply
    alone = run(fit(ctx(), grown, words, budget))
    again = run(fit(ctx(), grown, counting, budget, kept_before=kept))
    assert again.messages == alone.messages
    assert len(counted) <= bisection // 2, (bisection, len(counted))


def test_start_in_example_dialogue_becomes_the_example_separator_not_text() -> None:
    """SillyTavern's cards mark each example chat with <START>; the model gets the
    separator between examples, never the marker itself."""
    character = replace(SAKURA, example_dialogue="<START>\n{{user}}: Hi\n{{char}}: You again.\n<start>\n{{user}}: Bye\n{{char}}: Finally.")
    system = assemble(ctx(character=character), fixed_state()).messages[0]["content"]
    assert "<START>" not in system.upper()
    examples = system[system.index("## Example dialogue"):]
    assert examples.startswith("## Example dialogue\n[Example Chat]\nKai: Hi\nSakura: You again.\n\n[Example Chat]\nKai: Bye\nSakura: Finally.")
