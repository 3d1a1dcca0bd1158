"""SillyTavern's world-info rules in one scan (omoide.characters.lore_engine).

"World Info" is SillyTavern's documentation page
https://docs.sillytavern.app/usage/core-concepts/worldinfo/ (SillyTavern-Docs
Usage/worldinfo.md); "world-info.js" is SillyTavern's
public/scripts/world-info.js (checkWorldInfo, filterByInclusionGroups). The
entries are written as SillyTavern's world files write them (camelCase fields
kept in `extensions`) unless a test says a card's book."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from omoide.characters.books import lorebook_from_card, lorebook_from_world_info
from omoide.characters.lore_engine import MAX_STEPS, Source, Timers, scan_books
from omoide.characters.lore_rules import Logic, Position, rules_of
from omoide.characters.model import Lorebook


def world(*entries: dict[str, Any], scan_depth: int = 4) -> Lorebook:
    book = lorebook_from_world_info({"entries": {str(i): {"uid": i, **e} for i, e in enumerate(entries)}}, name="world")
    book.scan_depth = scan_depth
    return book


def fired(book: Lorebook, *texts: str, seed: int = 1, timers: Timers = Timers(), budget: int = 10_000) -> list[str]:
    result = scan_books([Source("w", book)], list(texts), timers=timers, recursive=book.recursive_scanning,
                        rng=random.Random(seed), count_tokens=lambda t: len(t) // 4 + 1, budget=budget)
    return [f.entry.content for f in result]


def test_not_any_keeps_out_an_entry_whose_secondary_key_is_there() -> None:
    """World Info, Optional Filter: NOT ANY activates "only if the primary key and None of
    the optional filter keys are in scanned context" (the issue: it fired with "Judgement" there)."""
    book = world({"key": ["court"], "keysecondary": ["Judgement"], "selective": True, "selectiveLogic": 2, "content": "The court is quiet."})
    assert fired(book, "We went to the court.") == ["The court is quiet."]
    assert fired(book, "At court, Judgement was given.") == []


def test_and_all_needs_every_secondary_key() -> None:
    """World Info, Optional Filter: AND ALL activates only if the primary key and ALL of the optional filter keys are present."""
    book = world({"key": ["mug"], "keysecondary": ["blue", "chipped"], "selective": True, "selectiveLogic": 3, "content": "The mug."})
    assert fired(book, "the blue mug") == []
    assert fired(book, "the chipped blue mug") == ["The mug."]


def test_not_all_fires_unless_every_secondary_key_is_there() -> None:
    """World Info, Optional Filter: NOT ALL prevents activation "if all of the optional filters are in scanned context"."""
    book = world({"key": ["mug"], "keysecondary": ["blue", "chipped"], "selective": True, "selectiveLogic": 1, "content": "The mug."})
    assert fired(book, "the blue mug") == ["The mug."]
    assert fired(book, "the mug") == ["The mug."]
    assert fired(book, "the chipped blue mug") == []


def test_and_any_is_the_default() -> None:
    """World Info, Optional Filter: AND ANY; world-info.js assumes it when selectiveLogic is absent."""
    book = world({"key": ["mug"], "keysecondary": ["blue", "chipped"], "selective": True, "content": "The mug."})
    assert rules_of(book.entries[0]).logic is Logic.AND_ANY
    assert fired(book, "the mug") == [] and fired(book, "the blue mug") == ["The mug."]


def test_an_entry_scans_its_own_depth() -> None:
    """World Info, Scan Depth: "Can be overridden on an entry level" (scanDepth); 1 scans only the last message."""
    book = world({"key": ["anchor"], "content": "deep"}, {"key": ["anchor"], "scanDepth": 1, "content": "shallow"})
    assert fired(book, "the anchor", "later") == ["deep"]
    assert sorted(fired(book, "later", "the anchor")) == ["deep", "shallow"]


def test_case_sensitive_and_whole_words_per_entry() -> None:
    """World Info, Case-sensitive keys and Match whole words, each overridable per entry:
    with matchWholeWords off "king" matches inside "liking"."""
    book = world({"key": ["Rose"], "caseSensitive": True, "content": "the name"},
                 {"key": ["king"], "matchWholeWords": False, "content": "anywhere"},
                 {"key": ["king"], "content": "whole word"})
    assert fired(book, "a rose and my liking") == ["anywhere"]
    assert sorted(fired(book, "Rose, long live the king")) == ["anywhere", "the name", "whole word"]


def test_probability() -> None:
    """World Info, Probability (Trigger %): 100 always, 0 never ("essentially disabling it"),
    50 about half the time; useProbability off ignores it."""
    book = world({"key": ["bell"], "probability": 0, "useProbability": True, "content": "never"},
                 {"key": ["bell"], "probability": 100, "content": "always"},
                 {"key": ["bell"], "probability": 50, "content": "sometimes"},
                 {"key": ["bell"], "probability": 0, "useProbability": False, "content": "unchecked"})
    runs = [fired(book, "the bell", seed=seed) for seed in range(200)]
    assert all("never" not in r and "always" in r and "unchecked" in r for r in runs)
    assert 60 < sum("sometimes" in r for r in runs) < 140


def test_recursion_follows_mentions_in_lore_that_fired() -> None:
    """World Info, Recursive scanning: "Both of them will be pulled into the context if the
    message text mentions just Bessie" (on for world files, as SillyTavern ships its settings)."""
    book = world({"key": ["Bessie"], "content": "Bessie is a cow and is friends with Rufus."},
                 {"key": ["Rufus"], "content": "Rufus is a dog."})
    assert book.recursive_scanning
    assert fired(book, "Have you met Bessie?") == ["Bessie is a cow and is friends with Rufus.", "Rufus is a dog."]
    book.recursive_scanning = False
    assert fired(book, "Have you met Bessie?") == ["Bessie is a cow and is friends with Rufus."]


def test_exclude_prevent_and_delay_until_recursion() -> None:
    """World Info, Recursive scanning: Non-recursable (excludeRecursion) is never activated by
    other entries; Prevent further recursion (preventRecursion) triggers no other entries;
    Delay until recursion is not triggered in the initial pass, only in a recursion step
    (world-info.js: which scans the messages and the lore that fired)."""
    book = world({"key": ["Bessie"], "content": "Bessie knows Rufus and Tom and Mo."},
                 {"key": ["Rufus"], "excludeRecursion": True, "content": "Rufus is a dog."},
                 {"key": ["Tom"], "preventRecursion": True, "content": "Tom the cat knows Ann."},
                 {"key": ["Ann"], "content": "Ann is a goose."},
                 {"key": ["Mo"], "delayUntilRecursion": True, "content": "Mo is a mouse."})
    assert fired(book, "Bessie") == ["Bessie knows Rufus and Tom and Mo.", "Tom the cat knows Ann.", "Mo is a mouse."]
    assert fired(book, "Rufus, Tom and Mo") == ["Rufus is a dog.", "Tom the cat knows Ann.", "Mo is a mouse."]
    assert fired(book, "Tom and Mo") == ["Tom the cat knows Ann."]  # nothing recursed: Mo waits


def test_recursion_is_bounded() -> None:
    """Recursion never runs away: at most MAX_STEPS steps (world-info.js's Max Recursion Steps, bounded here)."""
    chain = [{"key": [f"k{i}"], "content": f"then k{i + 1}"} for i in range(MAX_STEPS + 5)]
    assert len(fired(world(*chain), "k0")) == MAX_STEPS


def test_an_inclusion_group_lets_one_in() -> None:
    """World Info, Inclusion Group: of entries with the same group label only one is inserted,
    drawn by Group Weight (weight 0 never wins against others); an entry can be in several groups."""
    book = world({"key": ["weather"], "group": "sky", "groupWeight": 100, "content": "rain"},
                 {"key": ["weather"], "group": "sky", "groupWeight": 100, "content": "sun"},
                 {"key": ["weather"], "group": "sky", "groupWeight": 0, "content": "snow"},
                 {"key": ["weather"], "group": "sky, mood", "groupWeight": 0, "content": "fog"},
                 {"key": ["weather"], "group": "mood", "content": "gloom"})
    draws = [fired(book, "the weather", seed=seed) for seed in range(100)]
    sky = [[c for c in d if c in ("rain", "sun", "snow", "fog")] for d in draws]
    assert all(len(s) == 1 for s in sky)
    assert {s[0] for s in sky} == {"rain", "sun"}
    assert all("gloom" in d for d in draws)


def test_prioritize_inclusion_picks_the_highest_order() -> None:
    """World Info, Prioritize Inclusion (groupOverride): the one with the highest Order is selected."""
    book = world({"key": ["x"], "group": "g", "groupOverride": True, "order": 10, "content": "low"},
                 {"key": ["x"], "group": "g", "groupOverride": True, "order": 90, "content": "high"},
                 {"key": ["x"], "group": "g", "order": 200, "content": "plain"})
    assert all(fired(book, "x", seed=seed) == ["high"] for seed in range(20))


def test_sticky_cooldown_and_delay() -> None:
    """World Info, Timed Effects: a sticky entry stays active (whatever the messages say and
    ignoring probability); one on cooldown cannot activate; delay keeps an entry out until
    the chat has that many messages."""
    key = "w#0"
    book = world({"key": ["storm"], "sticky": 2, "cooldown": 3, "probability": 10, "content": "storm"})
    assert fired(book, "calm", timers=Timers(5, sticky=frozenset({key}))) == ["storm"]
    assert all(fired(book, "storm", seed=s, timers=Timers(5, cooldown=frozenset({key}))) == [] for s in range(20))
    delayed = world({"key": ["storm"], "delay": 4, "content": "late storm"})
    assert fired(delayed, "storm", timers=Timers(3)) == []
    assert fired(delayed, "storm", timers=Timers(4)) == ["late storm"]


def test_a_sticky_entry_wins_its_inclusion_group() -> None:
    """world-info.js filterGroupsByTimedEffects: a group with a sticky entry keeps only the sticky ones."""
    book = world({"key": ["x"], "group": "g", "content": "a"}, {"key": ["x"], "group": "g", "sticky": 3, "content": "b"})
    assert all(fired(book, "x", seed=s, timers=Timers(9, sticky=frozenset({"w#1"}))) == ["b"] for s in range(20))


def test_a_cards_book_reads_sillytavern_fields_from_extensions(tmp_path: Path) -> None:
    """A card's character_book as SillyTavern exports it (src/endpoints/characters.js
    convertWorldInfoToCharacterBook): its fields in snake_case under extensions, and
    use_regex set on every entry, though only /…/ keys are regular expressions."""
    book = lorebook_from_card({"entries": [
        {"keys": ["cat"], "content": "A cat.", "use_regex": True, "position": "after_char",
         "extensions": {"position": 4, "depth": 2, "role": 1, "selectiveLogic": 0, "scan_depth": 1, "match_whole_words": None,
                        "display_index": 0, "probability": 100, "useProbability": True, "group": "", "sticky": None}},
    ]})
    rules = rules_of(book.entries[0])
    assert (rules.position, rules.depth, rules.role, rules.scan_depth, rules.from_tavern) == (Position.AT_DEPTH, 2, "user", 1, True)
    assert fired(book, "concatenate") == [] and fired(book, "a cat") == ["A cat."]


def test_keys_and_recursion_read_macros() -> None:
    """world-info.js: keys are matched after substituteParams, and a fired entry's content
    (macros expanded) is what recursion scans."""
    book = world({"key": ["{{char}}"], "content": "About {{user}}."}, {"key": ["Kai"], "content": "Kai lore."})
    result = scan_books([Source("w", book)], ["Suzune waves."], recursive=True, count_tokens=len,
                        expand_key=lambda k: k.replace("{{char}}", "Suzune"),
                        expand_content=lambda t: t.replace("{{user}}", "Kai"))
    assert [f.entry.content for f in result] == ["About {{user}}.", "Kai lore."]


def test_world_file_fields_survive_a_round_trip_as_json() -> None:
    entry = {"uid": 0, "key": ["a"], "content": "c", "selectiveLogic": 2, "scanDepth": 3, "group": "g", "sticky": 1}
    book = lorebook_from_world_info({"entries": {"0": entry}})
    assert json.dumps(book.entries[0].extensions, sort_keys=True) == json.dumps(
        {k: v for k, v in entry.items() if k not in ("uid", "key", "content")}, sort_keys=True)
