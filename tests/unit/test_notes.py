"""The Character's Note, the Author's Note, placement in the prompt and lore
timers (omoide.characters.notes, placement, lore_state).

"Author's Note" is SillyTavern's page https://docs.sillytavern.app/usage/core-concepts/authors-note/
(SillyTavern-Docs Usage/Characters/Author's-Note.md); "World Info" its
Usage/worldinfo.md; "authors-note.js" and "script.js" its public/scripts/authors-note.js
(setFloatingPrompt) and public/script.js (doChatInject, the depth_prompt defaults)."""

from __future__ import annotations

from typing import Any

from omoide.characters.lore_match import FiredEntry
from omoide.characters.lore_rules import Rules, rules_of
from omoide.characters.lore_state import Activation, timers_at
from omoide.characters.model import Character, LoreEntry
from omoide.characters.notes import AuthorsNote, DepthNote, authors_note, character_note, inject, note_due
from omoide.characters.placement import place


def message(role: str, text: str) -> dict[str, str]:
    return {"role": role, "content": text}


WINDOW = [message("assistant", "a1"), message("user", "u1"), message("assistant", "a2"), message("user", "u2")]


def test_a_note_at_depth_goes_before_that_many_newest_messages() -> None:
    """Author's Note, In-chat: "Depth 0 = placed at the very end of the chat history. Depth 4 =
    placed before the most recent 3 chat history messages" (script.js doChatInject: the note
    goes in front of the `depth` newest messages; past the oldest, first)."""
    assert [m["content"] for m in inject(WINDOW, [DepthNote("N", 0, "system", "authors_note")], message)] == ["a1", "u1", "a2", "u2", "N"]
    assert [m["content"] for m in inject(WINDOW, [DepthNote("N", 2, "system", "authors_note")], message)] == ["a1", "u1", "N", "a2", "u2"]
    assert [m["content"] for m in inject(WINDOW, [DepthNote("N", 9, "user", "authors_note")], message)][0] == "N"


def test_a_part_of_the_summary_in_the_window_is_not_counted_as_a_message() -> None:
    """doChatInject counts chat messages; a summary part placed in the window
    (memory/timeline.py) goes with the message before it, so a note lands where
    it would without it, and never between a message and its part."""
    from omoide.domain.chat import Recap
    from omoide.memory.prompt.layers import recap_message
    from omoide.memory.prompt.notes import inject_notes

    part = recap_message(Recap(1, "[04/01 22:15] They talked."))
    window = [WINDOW[0], WINDOW[1], part, WINDOW[2], WINDOW[3]]
    out = [m["content"] for m in inject_notes(window, [DepthNote("N", 2, "system", "authors_note")])]  # type: ignore[arg-type]
    assert out == ["a1", "u1", part["content"], "N", "a2", "u2"]
    out = [m["content"] for m in inject_notes(window, [DepthNote("N", 3, "system", "authors_note")])]  # type: ignore[arg-type]
    assert out == ["a1", "N", "u1", part["content"], "a2", "u2"]


def test_notes_at_one_depth_go_in_sillytaverns_order() -> None:
    """script.js doChatInject: at one depth, by role assistant, user, then system nearest the
    end; of one role the Author's Note, the Character's Note, then lore, joined by newlines."""
    notes = [DepthNote("lore", 1, "system", "lore_at_depth"), DepthNote("char", 1, "system", "character_note"),
             DepthNote("an", 1, "system", "authors_note"), DepthNote("as user", 1, "user", "lore_at_depth"),
             DepthNote("as assistant", 1, "assistant", "character_note")]
    out = inject(WINDOW, notes, message)
    assert out[3:] == [message("assistant", "as assistant"), message("user", "as user"), message("system", "an\nchar\nlore"),
                       message("user", "u2")]


def test_the_characters_note_comes_from_depth_prompt() -> None:
    """script.js: extensions.depth_prompt {prompt, depth, role}; depth 4 and role system by default."""
    card = Character(id="o", name="Orin", extensions={"depth_prompt": {"prompt": " Smell of oil. ", "depth": 2, "role": "user"}})
    assert character_note(card) == DepthNote("Smell of oil.", 2, "user", "character_note")
    assert character_note(Character(id="o", name="Orin", extensions={"depth_prompt": {"prompt": "x"}})) == DepthNote("x", 4, "system", "character_note")
    assert character_note(Character(id="o", name="Orin", extensions={"depth_prompt": {"prompt": ""}})) is None


def test_the_authors_note_reads_chat_metadata_with_defaults() -> None:
    """authors-note.js metadata_keys (note_prompt, note_interval, note_depth, note_position,
    note_role) and its defaults: interval 1, in-chat, depth 4, system."""
    meta: dict[str, Any] = {"note_prompt": "Rain.", "note_interval": 3, "note_position": 0, "note_depth": 2, "note_role": 1}
    assert authors_note(meta) == AuthorsNote("Rain.", 3, 0, 2, "user")
    assert authors_note({}) == AuthorsNote("", 1, 1, 4, "system")
    assert authors_note({"note_depth": "bad", "note_role": 9}) == AuthorsNote()


def test_the_interval() -> None:
    """Author's Note, Insertion Frequency: 0 never, 1 every user message, 4 every 4th
    (authors-note.js setFloatingPrompt counts your messages)."""
    assert [note_due(1, n) for n in range(0, 4)] == [True] * 4
    assert [note_due(0, n) for n in range(0, 4)] == [False] * 4
    assert [n for n in range(1, 13) if note_due(4, n)] == [4, 8, 12]


def hit(content: str, constant: bool = False, **ext: Any) -> FiredEntry:
    """An entry as a scan hands it on when it fired."""
    entry = LoreEntry(keys=[] if constant else ["k"], content=content, constant=constant, extensions=ext)
    return FiredEntry(entry, "constant" if constant else "key 'k' in the last message", rules=rules_of(entry))


def test_placement_keeps_the_cards_text_stable() -> None:
    """World Info, Insertion Position, placed so the stable prefix stays stable: a constant
    entry goes to its place in the card; a keyed one whose place is in the card goes to the
    tail; @ D goes to its depth and role whatever it is; AN top/bottom join the Author's Note."""
    fired = [hit("before", True, position=0), hit("after", True, position=1), hit("keyed-before", position=0),
             hit("em-top", True, position=5), hit("em-bottom", True, position=6), hit("deep", position=4, depth=3, role=2),
             hit("an-top", position=2), hit("an-bottom", True, position=3), hit("chancy", True, position=1, probability=50)]
    placed = place(fired, character_note=DepthNote("char", 4, "system", "character_note"),
                   note=AuthorsNote("Note.", depth=1), note_due=True)
    assert (placed.lore_before, placed.lore_after, placed.examples_top, placed.examples_bottom) == (("before",), ("after",), ("em-top",), ("em-bottom",))
    assert placed.tail_lore == ("keyed-before", "chancy")
    assert placed.at_depth == (DepthNote("an-top\nNote.\nan-bottom", 1, "system", "authors_note"),
                               DepthNote("deep", 3, "assistant", "lore_at_depth"), DepthNote("char", 4, "system", "character_note"))


def test_an_authors_note_in_the_prompt_takes_only_stable_lore_and_a_skipped_note_takes_none() -> None:
    """Author's Note, Placement options (After Scenario: in the prompt); World Info: "If your
    Author's Note is disabled (Insertion Frequency = 0), World Info entries in A/N positions will be ignored"."""
    fired = [hit("keyed", position=2), hit("steady", True, position=3)]
    in_prompt = place(fired, character_note=None, note=AuthorsNote("Note.", position=0), note_due=True)
    assert in_prompt.note_after_card == "Note.\nsteady" and in_prompt.tail_lore == ("keyed",) and not in_prompt.at_depth
    before = place(fired, character_note=None, note=AuthorsNote("Note.", position=2), note_due=True)
    assert before.note_before_card == "Note.\nsteady"
    skipped = place(fired, character_note=None, note=AuthorsNote("Note.", interval=2), note_due=False)
    assert not skipped.at_depth and not skipped.tail_lore and len(skipped.left_out) == 2


def test_timed_effects_as_the_documentation_counts_them() -> None:
    """World Info, Timed Effects: "sticky = 3, cooldown = 2": activated at message 1, sticky for
    messages 2-4, cooldown for 5-6, "Message 7: entry can be activated again"."""
    rules = {"e": Rules(sticky=3, cooldown=2)}
    fired_at = [Activation("e", 1)]
    states = {n: timers_at(fired_at, rules, n) for n in range(2, 8)}
    assert [n for n, t in states.items() if "e" in t.sticky] == [2, 3, 4]
    assert [n for n, t in states.items() if "e" in t.cooldown] == [5, 6]
    assert not states[7].sticky and not states[7].cooldown
    only_cooldown = {"e": Rules(cooldown=2)}
    assert [n for n in range(2, 6) if "e" in timers_at(fired_at, only_cooldown, n).cooldown] == [2, 3]


def test_a_record_at_the_head_being_answered_does_not_count() -> None:
    """World Info, Timed Effects rule 3: "Active timed effects are removed if the chat doesn't
    advance": a record at the same length (a swipe, a regenerated reply) is ignored."""
    assert not timers_at([Activation("e", 5)], {"e": Rules(sticky=3)}, 5).sticky


def test_the_fit_drops_old_lines_but_not_the_summary_among_them_until_it_cuts_the_summary() -> None:
    from omoide.domain.chat import Recap
    from omoide.memory.prompt.layers import SUMMARY_LABEL, kept_recaps, recap_message

    whole, part = recap_message(Recap(1, "Kai has a sister, Aoi.", whole=True)), recap_message(Recap(2, "Aoi is in Leeds."))
    dropped = [WINDOW[0], whole, WINDOW[1], part]
    assert kept_recaps(dropped, None) == [whole, part]
    cut = kept_recaps(dropped, len(part["content"]) + 5)
    assert [m["content"] for m in cut] == ["Aoi.", part["content"]] and SUMMARY_LABEL in whole["content"]
