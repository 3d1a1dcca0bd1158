"""Who told each fact of a scenario: the user, the character (the host), or
someone else present. A fact says it (`said_by`), or its planting line does:
your line, or the reply of the character who says it."""

from __future__ import annotations

from omoide.check.scenario import Scenario

SOURCES = ("user", "character", "other")
"""How kept is split: what you said, what the host character said, what
someone else present said."""


def fact_speakers(scenario: Scenario) -> dict[str, str]:
    """fact id -> 'user' or the id of the character who said it."""
    out: dict[str, str] = {}
    for fact in scenario.facts.values():
        if fact.said_by:
            out[fact.id] = scenario.host if fact.said_by == "character" else fact.said_by
    for event in scenario.events:
        if event.fact and event.fact not in out and event.kind == "user":
            out[event.fact] = (event.speaker or scenario.host) if event.reply else "user"
    return out


def speaker_names(scenario: Scenario) -> dict[str, str]:
    """fact id -> the casefolded name its teller goes by in memory ("kai", "suzune")."""
    return {fid: (scenario.user if who == "user" else who).casefold() for fid, who in fact_speakers(scenario).items()}


def source_of(scenario: Scenario, needs: tuple[str, ...]) -> str:
    """'user', 'character', 'other', 'mixed' (facts of several), or '' (none known)."""
    speakers = fact_speakers(scenario)
    kinds = {"user" if speakers[f] == "user" else "character" if speakers[f] == scenario.host else "other"
             for f in needs if f in speakers}
    return kinds.pop() if len(kinds) == 1 else "mixed" if kinds else ""
