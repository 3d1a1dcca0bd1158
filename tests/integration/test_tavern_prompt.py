"""SillyTavern's macros, notes and lore rules in the prompt the backend receives:
a ChatSession on a real SQLite file, with a recording scripted backend.

Citations: "Macros" is https://docs.sillytavern.app/usage/core-concepts/macros/
(SillyTavern-Docs Usage/macros.md); "World Info" is .../worldinfo/ (Usage/worldinfo.md);
"Author's Note" is .../authors-note/ (Usage/Characters/Author's-Note.md); "script.js"
and "authors-note.js" are SillyTavern's public/script.js and public/scripts/authors-note.js."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from omoide.characters.macros import MacroEnv, expand
from omoide.characters.model import Character, LoreEntry, Lorebook
from omoide.config.settings import Settings
from omoide.domain.chat import MemoryState, Role
from omoide.chat.events import PromptNotice
from omoide.chat.session import ChatSession
from omoide.store import ImportNode, Store
from tests.scripted import ScriptedBackend

T1 = datetime(2026, 11, 24, 21, 5, tzinfo=UTC)


def settings(**kw: Any) -> Settings:
    return Settings(**{"user_name": "Kai", "context_size": 8192, "max_tokens": 200, **kw})


def backend() -> ScriptedBackend:
    return ScriptedBackend(default=lambda messages: ["Mm."])


async def say(session: ChatSession, text: str) -> list[Any]:
    return [event async for event in session.send(text)]


def sent(b: ScriptedBackend) -> list[dict[str, Any]]:
    return b.calls[-1]["messages"]


def world_entries(*entries: dict[str, Any]) -> Lorebook:
    from omoide.characters.books import lorebook_from_world_info

    return lorebook_from_world_info({"entries": {str(i): {"uid": i, **e} for i, e in enumerate(entries)}}, name="world")


# -- macros -----------------------------------------------------------------------------------


async def test_macros_in_the_card_greeting_notes_and_instructions(store: Store) -> None:
    """Macros: expanded in card fields, the greeting, the Character's Note and the
    post-history instructions; {{original}} in a system prompt override is the default
    prompt (script.js), in post-history instructions omoide has no default, so nothing.
    The card reads the chat as it began (its clock frozen there, so the stable prefix
    stays the same from turn to turn); the tail and the notes read this turn."""
    mika = Character(
        id="mika", name="Mika", first_message="It is {{time}} on {{weekday}}, {{user}}.",
        description="{{char}} opened the bakery at {{time}}. Today's bread: {{random::rye::spelt}}.",
        system_prompt="{{original}} Extra rule for {{char}}.",
        post_history_instructions="{{original}}Keep it short, {{user}}.{{// hidden}}",
        extensions={"depth_prompt": {"prompt": "{{char}} heard: {{lastUserMessage}} ({{isotime}})", "depth": 1, "role": "system"}},
    )
    b = backend()
    session = await ChatSession.open(store, mika, settings(), b)
    greeting = (await session.transcript())[0]
    assert re.fullmatch(r"It is \d{1,2}:\d\d [AP]M on \w+day, Kai\.", greeting.content), greeting.content
    session.clock = lambda: T1
    await say(session, "Good morning!")
    first = sent(b)
    started = expand("{{time}}", MacroEnv(char="Mika", user="Kai", now=greeting.created_at))
    assert f"Mika opened the bakery at {started}." in first[0]["content"]
    assert re.search(r"Today's bread: (rye|spelt)\.", first[0]["content"])
    assert "Extra rule for Mika." in first[0]["content"] and "You are Mika in an ongoing roleplay with Kai." in first[0]["content"]
    assert first[-1]["content"].endswith("Keep it short, Kai.") and "{{" not in first[-1]["content"]
    assert first[-3] == {"role": "system", "content": f"Mika heard: Good morning! ({T1.astimezone():%H:%M})"}
    session.clock = lambda: T1 + timedelta(hours=3)
    await say(session, "Still there?")
    second = sent(b)
    assert second[0] == first[0]  # the card did not change: its clock is the chat's start
    assert second[-3]["content"] == f"Mika heard: Still there? ({(T1 + timedelta(hours=3)).astimezone():%H:%M})"
    layers = {layer.name: layer for layer in session.last_prompt.layers}  # type: ignore[union-attr]
    assert "Mika heard: Still there?" in layers["character_note"].text


async def test_the_card_reads_the_chat_at_its_last_checkpoint(store: Store) -> None:
    """After a summary the card's clock and chat macros are those of the checkpoint,
    and they change only when the memory layer changes anyway."""
    from omoide.chat.tavern import Tavern

    chat = await store.chats.import_tree("mika", "t", [ImportNode(None, Role.ASSISTANT, "Hi."), ImportNode(0, Role.USER, "Bread?"),
                                                        ImportNode(1, Role.ASSISTANT, "Rye.")], 2)
    path = await store.messages.path(chat.head_id)
    summary = await store.memory.add_summary(chat.id, path[-1].id, content="s", covers_to_id=path[-1].id, diary_to_id=None)
    turn = await Tavern(store, chat.id).gather(
        speaker=Character(id="mika", name="Mika"), books=[], state=MemoryState(summary=summary, window=[]), head_id=path[-1].id,
        user="Kai", group=(), now=T1)
    assert turn.card_macros.now == summary.created_at
    assert (turn.card_macros.last_user_message, turn.card_macros.last_char_message) == ("Bread?", "Rye.")


async def test_your_message_is_stored_as_typed_and_its_macros_expanded_in_the_prompt(store: Store) -> None:
    """Macros: they work in the chat input box, and the prompt gets their values; the
    stored message, the transcript and the export keep what you typed (issue 33, item 12:
    `a{{roll:999999999d999999999}}` was stored as `a`)."""
    session = await ChatSession.open(store, Character(id="mika", name="Mika", first_message="Hi."), settings(), backend())
    b: ScriptedBackend = session.backend  # type: ignore[assignment]
    typed = "I roll {{roll:1d6}} for {{char}}; {{unknown}} stays."
    await say(session, typed)
    assert (await session.transcript())[1].content == typed
    assert re.fullmatch(r"\[[^\]]+\] I roll [1-6] for Mika; \{\{unknown\}\} stays\.", sent(b)[-2]["content"]), sent(b)[-2]
    await say(session, "a{{roll:999999999d999999999}}")
    assert (await session.transcript())[3].content == "a{{roll:999999999d999999999}}"
    assert sent(b)[-2]["content"].endswith(" a")  # too many dice: the roll gives nothing, as SillyTavern's


async def test_a_random_macro_in_your_message_is_the_same_in_every_prompt(store: Store) -> None:
    """A {{roll}}, {{random}} or {{pick}} you typed is drawn once for its message: every
    later prompt sends the same value (the story stays and the prompt cache holds), and
    {{time}} reads when you sent it."""
    session = await ChatSession.open(store, Character(id="mika", name="Mika", first_message="Hi."), settings(), backend())
    session.clock = lambda: T1
    b: ScriptedBackend = session.backend  # type: ignore[assignment]
    await say(session, "I roll {{roll:1d1000000}} and {{random::a::b::c::d::e::f::g::h}} and {{pick::x::y::z}} at {{time}}.")
    first = sent(b)[-2]["content"]
    assert "{{" not in first
    for _ in range(3):
        await say(session, "Again.")
        assert next(m for m in sent(b) if m["role"] == "user")["content"] == first
    mine = (await session.transcript())[1]
    assert first.endswith(f" at {expand('{{time}}', MacroEnv(char='Mika', user='Kai', now=mine.created_at))}.")


# -- the Character's Note and the Author's Note ------------------------------------------------


async def imported(store: Store, metadata: dict[str, Any], character: Character) -> ChatSession:
    chat = await store.chats.import_tree(character.id, "imported", [ImportNode(None, Role.ASSISTANT, "Hello.")], 0)
    await store.exchange.save(chat.id, {"chat_metadata": metadata}, {})
    session = await ChatSession.open(store, character, settings(), backend(), chat_id=chat.id)
    session.clock = lambda: T1
    return session


async def test_the_authors_note_at_its_depth_every_interval(store: Store) -> None:
    """Author's Note from chat_metadata (authors-note.js): In-chat at depth 1, as user, on every
    2nd of your messages (Insertion Frequency); shown as its own layer in /prompt."""
    meta = {"note_prompt": "[It is raining on {{weekday}}.]", "note_interval": 2, "note_position": 1, "note_depth": 1, "note_role": 1}
    session = await imported(store, meta, Character(id="mika", name="Mika"))
    b: ScriptedBackend = session.backend  # type: ignore[assignment]
    await say(session, "one")
    assert not any("raining" in m["content"] for m in sent(b))
    assert "authors_note" not in [layer.name for layer in session.last_prompt.layers]  # type: ignore[union-attr]
    await say(session, "two")
    messages = sent(b)
    assert messages[-3] == {"role": "user", "content": "[It is raining on Tuesday.]"}  # before the newest message
    assert messages[-2]["content"].endswith("two")
    names = [layer.name for layer in session.last_prompt.layers]  # type: ignore[union-attr]
    assert names.index("window") < names.index("authors_note") < names.index("tail")
    assert sum(layer.tokens for layer in session.last_prompt.layers) == session.last_prompt.total_tokens  # type: ignore[union-attr]


async def test_an_authors_note_in_the_prompt_sits_beside_the_card(store: Store) -> None:
    """Author's Note, After Scenario (note_position 0): in the prompt's leading system text,
    right after the card (its own layer)."""
    session = await imported(store, {"note_prompt": "Write in the present tense.", "note_position": 0},
                             Character(id="mika", name="Mika", scenario="A bakery."))
    await say(session, "hi")
    head = sent(session.backend)[0]["content"]  # type: ignore[arg-type]
    assert head.index("A bakery.") < head.index("Write in the present tense.")
    assert [layer.name for layer in session.last_prompt.layers][:2] == ["card", "authors_note"]  # type: ignore[union-attr]


# -- lore ---------------------------------------------------------------------------------------


async def test_lore_logic_chance_and_positions_reach_the_prompt(store: Store) -> None:
    """World Info: NOT ANY keeps the entry out when "Judgement" is there; probability 0 never
    fires; "@ D" goes at its depth with its role; a keyed "Before Char Defs" entry goes to
    the tail (never into the card, whose bytes stay the same); a constant one into the card."""
    book = world_entries(
        {"key": ["court"], "keysecondary": ["Judgement"], "selective": True, "selectiveLogic": 2, "content": "The court is empty."},
        {"key": ["court"], "probability": 0, "useProbability": True, "content": "Never sent."},
        {"key": ["court"], "position": 4, "depth": 0, "role": 2, "content": "(the judge coughs)"},
        {"key": ["court"], "position": 0, "content": "Courts close at six."},
        {"key": [], "constant": True, "position": 0, "content": "The town is Kesh."},
    )
    character = Character(id="mika", name="Mika", description="A baker.", character_book=book)
    b = backend()
    session = await ChatSession.open(store, character, settings(), b)
    await say(session, "Is the court open?")
    first = sent(b)
    every = json.dumps(first)
    assert "The court is empty." in first[-1]["content"] and "Courts close at six." in first[-1]["content"]
    assert "Never sent." not in every
    assert first[-2] == {"role": "assistant", "content": "(the judge coughs)"}
    head = first[0]["content"]
    assert head.index("The town is Kesh.") < head.index("A baker.")  # Before Char Defs, and constant
    await say(session, "Judgement was given in court.")
    second = sent(b)
    assert "The court is empty." not in json.dumps(second)
    assert second[0] == first[0]


async def test_recursion_in_an_attached_world_file(store: Store, tmp_path: Path) -> None:
    """World Info, Recursive scanning, on for world files as SillyTavern ships: Bessie pulls in Rufus."""
    from omoide.characters.attached import attach_lorebook

    mika = Character(id="mika", name="Mika", first_message="Hi.")
    path = tmp_path / "farm.json"
    path.write_text(json.dumps({"entries": {"0": {"uid": 0, "key": ["Bessie"], "content": "Bessie is a cow and is friends with Rufus."},
                                            "1": {"uid": 1, "key": ["Rufus"], "content": "Rufus is a dog."}}}))
    attach_lorebook(path, mika)
    b = backend()
    session = await ChatSession.open(store, mika, settings(), b)
    await say(session, "Where is Bessie?")
    assert "Rufus is a dog." in sent(b)[-1]["content"]
    assert any("Rufus: key 'Rufus' in lore that fired (Bessie)" in line for line in session.last_prompt.lore)  # type: ignore[union-attr]


async def test_sticky_cooldown_and_delay_follow_the_path(store: Store) -> None:
    """World Info, Timed Effects: sticky keeps an entry in for N messages, cooldown keeps it
    out, delay until the chat has N messages; "Branches inherit the state of the parent
    chat", and going back before the entry fired forgets it."""
    book = world_entries({"key": ["storm"], "sticky": 4, "content": "A storm rages."},
                         {"key": ["bell"], "cooldown": 3, "content": "The bell tolls."},
                         {"key": ["late"], "delay": 6, "content": "It is late."})
    b = backend()
    session = await ChatSession.open(store, Character(id="mika", name="Mika", first_message="Hi.", character_book=book), settings(), b)

    async def tail(text: str) -> str:
        await say(session, text)
        return str(sent(b)[-1]["content"])

    assert "A storm rages." in await tail("a storm, a bell, so late")  # 2 messages: the delay keeps "late" out
    assert "It is late." not in sent(b)[-1]["content"] and "The bell tolls." in sent(b)[-1]["content"]
    second = await tail("calm now, the bell again, late")
    assert "A storm rages." in second and "The bell tolls." not in second and "It is late." not in second
    await session.tree.save_branch("stormy")
    third = await tail("bell, late")
    assert "A storm rages." in third and "The bell tolls." in third and "It is late." in third
    await session.tree.undo()
    await session.tree.undo()
    await session.tree.undo()  # back to the greeting, before the storm
    assert "A storm rages." not in await tail("calm")
    await session.tree.restore_branch("stormy")
    assert "A storm rages." in await tail("calm")  # the branch kept its own past


async def test_dropped_constant_lore_is_a_notice(store: Store) -> None:
    """World Info, Context % / Budget; issue 24: when the budget drops a constant entry the
    user hears it (a PromptNotice, which `omoide say` prints and the TUI shows), once."""
    book = Lorebook(entries=[LoreEntry(keys=[], content="The harbour town of Kesh. " * 40, constant=True, name="Kesh")])
    session = await ChatSession.open(store, Character(id="mika", name="Mika", first_message="Hi.", character_book=book),
                                     settings(context_size=1024, max_tokens=100), backend())
    events = await say(session, "hello")
    notices = [e.note for e in events if isinstance(e, PromptNotice)]
    assert len(notices) == 1 and "Kesh" in notices[0] and "lore_budget_percent" in notices[0]
    assert not [e for e in await say(session, "again") if isinstance(e, PromptNotice)]


# -- a card larger than the context ---------------------------------------------------------------


async def test_a_card_too_long_for_the_context_is_said_with_its_fields_and_tokens(store: Store) -> None:
    """Issue 33, item 13: a description far longer than the context was cut mid-word and
    the greeting dropped with nothing said. SillyTavern refuses such a prompt; omoide
    sends what fits and says what it left out: the fields and their tokens, once per
    chat session (in the log too), and /prompt lists them."""
    mika = Character(id="mika", name="Mika", first_message="Hi.", description="Mika remembers everything. " * 2000,
                     scenario="A bakery at dawn.")
    session = await ChatSession.open(store, mika, settings(context_size=2048), backend())
    events = await say(session, "Hello.")
    notes = [e.note for e in events if isinstance(e, PromptNotice)]
    assert len(notes) == 1, notes
    note = notes[0]
    assert note.startswith("Mika's card does not fit the context (1,848 tokens for the prompt); left out: ")
    cut = re.search(r"the end of the card's description, ([\d,]+) tokens; the card's scenario, ([\d,]+) tokens", note)
    assert cut and int(cut.group(1).replace(",", "")) > 10_000 and int(cut.group(2)) >= 5, note
    assert "; and the 1 oldest message(s) of the chat, the greeting among them." in note
    assert "Raise [backend] context_size, or shorten the card." in note
    prompt = session.last_prompt
    assert prompt is not None and prompt.total_tokens <= 1848
    card = next(layer.text for layer in prompt.layers if layer.name == "card")
    assert card.endswith("everything.") or card.endswith("remembers") or card.endswith("Mika")  # never mid-word
    assert any("the end of the card's description" in d for d in prompt.dropped)
    assert not [e for e in await say(session, "Still there?") if isinstance(e, PromptNotice)]  # said once
