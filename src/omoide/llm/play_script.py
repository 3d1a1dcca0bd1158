"""The chat as a play script, for a tiny embedded model to continue.

Through its chat template a 135M model takes the assistant's part and answers
like one ("I'm sorry for any confusion, but…"); given the same chat as a script
whose next line is the character's, it writes that line in the character's
voice. The card, memory and rules stay at the top as they are, every message
becomes a line opened by its time and its speaker's name, and the prompt ends
with the character's name. Earlier lines never change as the chat grows, so
the prefix cache still reuses everything up to the newest message.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from omoide.llm.base import is_memory_task
from omoide.llm.stamps import split_stamp

SCENE_OPENING = "The scene so far, as a play script:"


def _named_lines(content: str, names: Sequence[str]) -> list[str] | None:
    """A group scene's user turn ("[stamp] Name: text" lines, see prompt.window_messages)
    as script lines, or None when it is not one."""
    lines: list[str] = []
    for raw in content.split("\n"):
        _, text = split_stamp(raw)
        if any(text.startswith(f"{name}: ") for name in names):
            lines.append(raw)
        elif lines:
            lines[-1] += "\n" + raw  # a message of several lines
        else:
            return None
    return lines


def script_prompt(messages: Sequence[Mapping[str, Any]], user: str, character: str, *, others: Sequence[str] = ()) -> str:
    """`messages` (a chat prompt: the leading system message, the window, the
    tail as a system note) as one text ending where the character speaks next,
    at the time of the last message: the stamp goes before the name, so the
    model has no stamp of its own to write. A prompt whose last message is the
    character's own ends inside that line, so the model continues it."""
    head, lines, when = "", [], ""
    task = ""
    if messages and is_memory_task(messages[-1]):
        # Memory work continuing the chat: the script as the chat left it, then the task, not a line.
        task, messages = str(messages[-1]["content"]).strip(), messages[:-1]
    for index, message in enumerate(messages):
        content = (message.get("content") or "").strip()
        role = message["role"]
        if role == "system" and index == 0:
            head = content
        elif role == "user" and others and (named := _named_lines(content, (user, *others))):
            lines.extend(named)  # a group scene: everyone else's lines, each under its speaker
            when = split_stamp(named[-1])[0] or when
        elif role in ("user", "assistant"):
            stamp, text = split_stamp(content)
            when = stamp or when  # a reply without a stamp is at the time of the line it answers
            lines.append(f"{when + ' ' if when else ''}{user if role == 'user' else character}: {text}")
        elif content:  # a note for this turn (date, fresh diary lines, lore) or a tool's answer
            lines.append(f"({content})")
    if task:
        lines.append(f"\n{task}")
    elif not messages or messages[-1]["role"] != "assistant":
        lines.append(f"{when + ' ' if when else ''}{character}:")
    script = SCENE_OPENING + "\n" + "\n".join(lines)
    return f"{head}\n\n{script}" if head else script
