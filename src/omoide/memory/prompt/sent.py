"""What the prompt sends of stored text: the window's messages with the macros
of your own messages expanded and the card's regex scripts applied, and fired
lore through the world-info scripts. What is stored stays as it was typed and
written (docs/sillytavern.md).

Your message's macros read the message itself, so its prompt text is the same
in every prompt: the clock of when you sent it, {{random}} and {{roll}} drawn
from a source seeded by the chat and the message, and the chat before it in
the window. A reroll at every turn would change the window's bytes, breaking
the prompt cache and what the character was told before."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import replace

from omoide.characters.lore_match import FiredEntry, LoreScanResult
from omoide.characters.lore_rules import Position
from omoide.characters.macros import MacroEnv, chat_values, expand
from omoide.characters.regex_scripts import Placement, RegexScripts
from omoide.domain.chat import Message, Role


def own_message_env(env: MacroEnv, message: Message, before: Sequence[Message]) -> MacroEnv:
    """The macro values of your `message`, the same in every prompt that holds it."""
    return replace(env, now=message.created_at, input="", rng=random.Random(f"{env.pick_seed}:message:{message.id}"),
                   **chat_values(before))  # type: ignore[arg-type]


def sent_window(window: Sequence[Message], env: MacroEnv, scripts: RegexScripts) -> list[Message]:
    """`window` as the prompt sends it (the newest message is at depth 0)."""
    out: list[Message] = []
    for index, message in enumerate(window):
        text = message.content
        own = message.role is Role.USER
        if own and ("{{" in text or "<" in text):
            text = expand(text, own_message_env(env, message, window[:index]))
        if scripts and message.role in (Role.USER, Role.ASSISTANT):
            placement = Placement.USER_INPUT if own else Placement.AI_OUTPUT
            text = scripts.apply(text, placement, "sent", depth=len(window) - 1 - index, env=env)
        out.append(message if text == message.content else replace(message, content=text))
    return out


def sent_lore(fired: LoreScanResult, env: MacroEnv, scripts: RegexScripts) -> LoreScanResult:
    """Fired entries through the world-info scripts (an @D entry at its depth);
    one left empty is not placed, as in SillyTavern."""
    if not scripts:
        return fired

    def through(hit: FiredEntry) -> FiredEntry:
        depth = hit.rules.depth if hit.rules.position is Position.AT_DEPTH else None
        text = scripts.apply(hit.entry.content, Placement.WORLD_INFO, "sent", depth=depth, env=env)
        return hit if text == hit.entry.content else replace(hit, entry=replace(hit.entry, content=text))

    return LoreScanResult([through(hit) for hit in fired], fired.skipped)


def shown_text(message: Message, scripts: RegexScripts, env: MacroEnv, depth: int | None) -> str:
    """`message` as the transcript shows it: what was stored, through the scripts
    that change what is shown (markdown-only ones and those on neither side)."""
    if not scripts or message.role not in (Role.USER, Role.ASSISTANT):
        return message.content
    placement = Placement.USER_INPUT if message.role is Role.USER else Placement.AI_OUTPUT
    return scripts.apply(message.content, placement, "shown", depth=depth, env=env)
