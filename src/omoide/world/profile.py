"""The user profile every character knows: name, how to address them, pronouns,
and free facts. It goes into the stable part of every prompt.

`ProfileBook` is what clients use (the CLI, the TUI through the session): it
reads and edits the profile as one text (the format `omoide profile edit`
opens in $EDITOR) and decides what happens to a fact a character learned
(`profile_learning`: ask = a proposal for the user, auto = accepted, off = dropped).

A fact a character learned is in force while the message it was learned at is
on its chat's path: `/branch restore`, `/undo` or an edit to before it leaves
it out of every prompt (it stays in the profile, marked, and comes back with
the path), as the world pass retracts what a left path added.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from omoide.domain.chat import FactStatus, Profile, ProfileFact
from omoide.errors import CommandError, NotFound
from omoide.store import Store
from omoide.store.profile import FIELDS

HEADER = """# Your profile: what every character knows about you, in every chat.
# Lines starting with # are ignored. Keep 'key: value'; one fact a line, '- fact'.
"""
LABELS = {"name": "Name", "address": "Call them", "pronouns": "Pronouns"}
MAX_FACT = 300
"""Characters in one fact: a fact is a line, not an essay."""


def render_text(profile: Profile, *, header: bool = True) -> str:
    lines = [HEADER] if header else []
    lines += [f"{key}: {getattr(profile, key)}".rstrip() for key in FIELDS]
    lines.append("")
    lines.append("# Facts and preferences, one per line:" if header else "facts:" if profile.facts else "facts: none yet")
    lines += [f"- {fact.content}" for fact in profile.facts]
    return "\n".join(lines) + "\n"


def parse_text(text: str) -> tuple[dict[str, str], list[str]]:
    """The fields and facts of an edited profile text; a line that is neither
    is an error that names it (nothing is saved then)."""
    fields: dict[str, str] = {}
    facts: list[str] = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith(("-", "*")):
            fact = line[1:].strip()
            if fact:
                facts.append(check_fact(fact))
            continue
        key, colon, value = line.partition(":")
        key = key.strip().lower()
        if not colon or key not in FIELDS:
            raise CommandError(
                f"Line {number} of the profile is not understood: '{line[:60]}'.",
                f"Use 'name: …', 'address: …', 'pronouns: …' or '- a fact'. ({', '.join(FIELDS)} are the keys.)",
            )
        fields[key] = " ".join(value.split())
    return fields, list(dict.fromkeys(facts))


def check_fact(text: str) -> str:
    fact = " ".join(text.split())
    if not fact:
        raise CommandError("The fact is empty.", 'Usage: omoide profile add "allergic to cats"')
    if len(fact) > MAX_FACT:
        raise CommandError(f"The fact is {len(fact)} characters long; the most is {MAX_FACT}.", "Split it into shorter facts.")
    return fact


def provenance(fact: ProfileFact) -> str:
    """Who wrote a fact, and where a character learned it."""
    if not fact.source:
        return "written by you"
    where = f" in chat #{fact.chat_id} at message #{fact.message_id}" if fact.chat_id else ""
    return f"learned by {fact.source}{where}"


def prompt_section(profile: Profile) -> str:
    """The profile as the prompt shows it ('' when empty)."""
    if profile.empty:
        return ""
    lines = [f"{LABELS[key]}: {getattr(profile, key)}" for key in FIELDS if getattr(profile, key)]
    lines += [f"- {fact.content}" for fact in profile.facts]
    return "## What is true about {{user}} (known in every story)\n" + "\n".join(lines)


@dataclass(frozen=True, slots=True)
class Learned:
    """What became of a fact a character learned."""

    fact: ProfileFact | None
    """None when profile_learning is off or the profile already holds it."""
    accepted: bool


class ProfileBook:
    def __init__(self, store: Store, learning: Literal["ask", "auto", "off"] = "ask") -> None:
        self.store = store
        self.learning = learning
        self._seen: dict[int, tuple[int, bool]] = {}
        """Message a fact was learned at -> (the head it was last checked against, on that head's path)."""

    async def get(self) -> Profile:
        return await self.store.profile.get()

    async def for_prompt(self, chat_id: int, head_id: int) -> Profile:
        """The profile a prompt of chat `chat_id` at `head_id` is told: without
        the facts learned on a path left behind (see `left_behind`)."""
        profile = await self.get()
        left = await self.left_behind(profile.facts, heads={chat_id: head_id})
        return replace(profile, facts=[f for f in profile.facts if f.id not in left]) if left else profile

    async def left_behind(self, facts: list[ProfileFact], *, heads: dict[int, int] | None = None) -> set[int]:
        """The ids of `facts` learned at a message that is not on its chat's path:
        the path to `heads[chat]` where given, else to the chat's head."""
        heads = dict(heads or {})
        left: set[int] = set()
        for fact in facts:
            if fact.chat_id is None or fact.message_id is None:
                continue  # written by you: true in every story
            if fact.chat_id not in heads:
                try:
                    head = (await self.store.chats.get(fact.chat_id)).head_id
                except NotFound:
                    continue  # its chat is gone; nothing to follow
                if head is None:
                    left.add(fact.id)
                    continue
                heads[fact.chat_id] = head
            try:
                on_path = await self._on_path(fact.message_id, heads[fact.chat_id])
            except NotFound:
                continue
            if not on_path:
                left.add(fact.id)
        return left

    async def _on_path(self, message_id: int, head_id: int) -> bool:
        """Whether `message_id` is on the path to `head_id`. Each turn moves the
        head a message or two down from the last one checked: the answer then
        carries over after a walk of those few steps, not of the whole path (which
        a chat that forked at the fact's depth would need at every turn)."""
        seen = self._seen.get(message_id)
        if seen is not None and seen[0] == head_id:
            return seen[1]
        if seen is not None and await self.store.messages.is_ancestor(seen[0], head_id):
            # The new path extends the old one: what was on it still is; what was
            # not is still not, unless it lies deeper than the old head (a restore
            # back to the branch the fact was learned on).
            depths = await self.store.messages.depths([message_id, seen[0]])
            if seen[1] or depths.get(message_id, 0) <= depths.get(seen[0], 0):
                self._seen[message_id] = (head_id, seen[1])
                return seen[1]
        on_path = await self.store.messages.is_ancestor(message_id, head_id)
        self._seen[message_id] = (head_id, on_path)
        return on_path

    async def add(self, text: str) -> ProfileFact:
        fact = check_fact(text)
        return await self.store.profile.add_fact(fact)

    async def save_text(self, text: str) -> Profile:
        """Apply an edited profile text: changed fields get a new version, facts
        taken out are retired (kept, never deleted), new lines become facts."""
        fields, facts = parse_text(text)
        current = await self.get()
        for key in FIELDS:
            if key in fields and fields[key] != getattr(current, key):
                await self.store.profile.set_field(key, fields[key])
        kept = {f.content for f in current.facts}
        for fact in current.facts:
            if fact.content not in facts:
                await self.store.profile.set_status(fact.id, FactStatus.REMOVED)
        for fact_text in facts:
            if fact_text not in kept:
                await self.store.profile.add_fact(fact_text)
        return await self.get()

    async def learn(self, text: str, *, character: str, chat_id: int, message_id: int) -> Learned:
        """A fact a character marked as being about the user (save_memory about_user)."""
        fact = " ".join(text.split())[:MAX_FACT]
        if self.learning == "off" or not fact:
            return Learned(None, False)
        current = await self.get()
        if any(f.content.casefold() == fact.casefold() for f in [*current.facts, *current.proposals]):
            return Learned(None, False)
        status = FactStatus.ACTIVE if self.learning == "auto" else FactStatus.PROPOSED
        stored = await self.store.profile.add_fact(fact, status=status, source=character, chat_id=chat_id, message_id=message_id)
        return Learned(stored, status is FactStatus.ACTIVE)

    async def decide(self, fact_id: int, accept: bool) -> ProfileFact:
        fact = await self.store.profile.fact(fact_id)
        if fact.status is not FactStatus.PROPOSED:
            raise CommandError(f"Fact #{fact_id} is not waiting for a decision (it is {fact.status}).",
                               "`omoide profile` lists the proposals waiting for you.")
        return await self.store.profile.set_status(fact_id, FactStatus.ACTIVE if accept else FactStatus.REJECTED)
