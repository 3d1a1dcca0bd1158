"""The arms of the check: the baselines and every memory style, with and
without the world. Each runs the same script in a data directory of its own.

Your own settings stay as they are (backend, context size, thresholds, batch
sizes) except what an arm is about: which memory works, and what the prompt
may show. The profile is left out of every arm (a fact it learned would be
known by every character), and characters propose nothing to it."""

from __future__ import annotations

from dataclasses import dataclass, field

from omoide.config.sections import MemorySettings

SEARCH = "search"
DEFAULT_STYLE = "summary+world"
SEARCH_PERCENT = MemorySettings().memory_percent
"""The share of the context plain retrieval fills when the run has no default style to
match (check/run.py gives it the tokens the default style's memory took): what the
default style's memory may take."""
NO_MEMORY = ("diary", "world", "profile", "pinned", "corrections")
"""What the baselines hide: the window (or the search) is all they have."""


@dataclass(frozen=True, slots=True)
class Arm:
    name: str
    about: str
    overrides: dict[str, object] = field(default_factory=dict)
    hidden: tuple[str, ...] = ()
    """Memory tiers the arm's chats hide (/amnesia)."""
    world: bool = False
    """Conversations end when an evening goes idle, and their world pass runs."""
    baseline: bool = False


def _style(style: str, world: bool) -> Arm:
    name = f"{style}+world" if world else style
    about = {"summary": "running summary + diary", "memos": "memo book + diary", "both": "summary + memos + diary"}[style]
    return Arm(name, about + (" + world memory" if world else ""), {"memory_style": style, "world_idle_hours": 3.0 if world else 0.0},
               () if world else ("world", "profile"), world=world)


ARMS: tuple[Arm, ...] = (
    Arm("window", "no memory: the last recent_messages raw", {"memory_style": "none", "world_idle_hours": 0.0},
        NO_MEMORY, baseline=True),
    Arm("full", "no memory: every message raw, while it fits the context",
        {"memory_style": "none", "recent_messages": 100_000, "world_idle_hours": 0.0}, NO_MEMORY, baseline=True),
    Arm(SEARCH, "plain retrieval: the last recent_messages raw and the story's messages most like the newest by bm25,"
        " in as many tokens as the default style's memory takes in the same run",
        {"memory_style": "none", "recall_passages_plain": True, "recall_passages_percent": SEARCH_PERCENT, "recall_passages": 40,
         "world_idle_hours": 0.0}, NO_MEMORY, baseline=True),
    *(_style(style, world) for world in (False, True) for style in ("summary", "memos", "both")),
)
COMMON: dict[str, object] = {"user_name": "Kai", "user_persona": "", "personas": {}, "profile_learning": "off", "gossip_rate": 0.0,
                           "scene_seed": 26}
"""Every arm: the script's user, no profile learning, no gossip target drawn
(it would change prompts at random), a fixed seed for who speaks."""


def arm(name: str) -> Arm:
    found = next((a for a in ARMS if a.name == name), None)
    if found is None:
        raise KeyError(name)
    return found
