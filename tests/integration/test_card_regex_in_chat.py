"""A card's regex scripts (SillyTavern's Regex extension, `extensions.regex_scripts`)
through the chat session: what the prompt sends, what is stored, what is shown.

Citations: SillyTavern's public/scripts/extensions/regex/engine.js (getRegexedString:
markdownOnly, promptOnly, minDepth/maxDepth; runRegexScript: {{match}}, $N groups,
trimStrings) and public/scripts/world-info.js (world info through placement 5, prompt
only, at an @D entry's depth). The card is tests/data/cards/v2_statusbar.json: a reply
ends with a <status> block that five scripts keep out of the prompt and show only
for the newest reply."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from omoide.characters.cards import character_from_card
from omoide.characters.model import Character
from omoide.chat.events import PromptNotice
from omoide.chat.session import ChatSession
from omoide.config.settings import Settings
from omoide.store import Store
from tests.scripted import ScriptedBackend

CARD = Path(__file__).parent.parent / "data" / "cards" / "v2_statusbar.json"
STATUS = "\n\n<status>\nLocation: mid-bay\nTime: 23:55\nMood: wary\n</status>"


def wren() -> Character:
    return character_from_card(json.loads(CARD.read_text(encoding="utf-8")), character_id="wren")


async def open_session(store: Store, character: Character) -> tuple[ChatSession, ScriptedBackend]:
    backend = ScriptedBackend(default=lambda messages: ["*Wren tears the ticket.* Sit anywhere.", STATUS])
    session = await ChatSession.open(store, character, Settings(user_name="Kai", context_size=8192, max_tokens=200), backend)
    return session, backend


async def say(session: ChatSession, text: str) -> list[Any]:
    return [event async for event in session.send(text)]


async def test_the_status_bars_stay_out_of_the_prompt_and_the_store_keeps_them(store: Store) -> None:
    session, backend = await open_session(store, wren())
    await say(session, "One ticket. (OOC: make it rain later) Is the lighthouse lit?")
    await say(session, "Thanks.")
    sent = backend.calls[-1]["messages"]
    window = [m["content"] for m in sent if m["role"] in ("user", "assistant")]
    assert not any("<status>" in text or "Mood:" in text for text in window), window
    assert window[0].endswith("Last crossing, friend. Ticket?")
    assert window[1].endswith("One ticket. Is the lighthouse lit?")  # the OOC note is prompt-only: gone
    assert window[2].endswith("Sit anywhere.")
    lore = sent[-1]["content"]  # the keyed entry fired on "lighthouse": its <thoughts> stay out
    assert "The lighthouse keeper owes Wren money." in lore and "never ask" not in lore
    stored = [m.content for m in await session.transcript()]
    assert stored[0].endswith("Mood: tired\n</status>")
    assert stored[1] == "One ticket. (OOC: make it rain later) Is the lighthouse lit?"
    assert stored[2] == "*Wren tears the ticket.* Sit anywhere." + STATUS


async def test_what_is_shown_the_newest_status_as_a_quote_the_older_hidden(store: Store) -> None:
    session, _ = await open_session(store, wren())
    await say(session, "One ticket. (OOC: rain later)")
    path = await session.transcript()
    greeting, mine, reply = path
    assert session.navigator.shown(reply, 0).endswith("> **Wren's status**  \n> Location: mid-bay\n23:55\nMood: wary")
    assert "<status>" not in session.navigator.shown(greeting, 2) and "Mood" not in session.navigator.shown(greeting, 2)
    assert session.navigator.shown(mine, 1) == mine.content  # prompt-only: what you typed is shown


async def test_a_script_re2_cannot_run_is_skipped_with_a_notice(store: Store) -> None:
    character = wren()
    scripts = [*character.extensions["regex_scripts"],
               {"scriptName": "Look behind", "findRegex": "/(?<=Sit) anywhere/g", "replaceString": "", "placement": [2]}]
    character.extensions = {**character.extensions, "regex_scripts": scripts}
    session, backend = await open_session(store, character)
    events = await say(session, "Hello.")
    notes = [e.note for e in events if isinstance(e, PromptNotice)]
    assert any("regex script 'Look behind' skipped" in n for n in notes), notes
    assert not any(isinstance(e, PromptNotice) for e in await say(session, "Again."))  # said once
    window = [m["content"] for m in backend.calls[-1]["messages"] if m["role"] == "assistant"]
    assert window and not any("<status>" in text for text in window)  # the others still run
