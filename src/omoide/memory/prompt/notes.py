"""The prompt's SillyTavern parts: which macro values a layer reads, notes
placed at a depth of the window, and the per-layer token count that includes
them.

A prompt's layers come in prompt order: those before the window are joined
into the leading system message; those after it, but the tail, are notes
placed in the window (the Character's Note, an in-chat Author's Note, lore
"@ depth"); then the tail."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from omoide.characters.macros import MacroEnv, expand
from omoide.characters.lore_rules import NoteRole
from omoide.characters.notes import LAYER_ORDER, DepthNote, inject
from omoide.llm.base import ChatMessage
from omoide.memory.prompt.model import CountPrompt


CLOSING = ("passages", "tail")
"""The layers of the closing system message, after the window and its notes."""


def macro_env(macros: MacroEnv | None, card_macros: MacroEnv | None, *, char: str, user: str, card: bool) -> MacroEnv:
    """The values a layer's macros read: the card's (as of the last checkpoint) or this turn's."""
    env = (card_macros or macros) if card else macros
    return env or MacroEnv(char=char, user=user)


def lore_text(texts: Sequence[str], env: MacroEnv) -> str:
    """Lore entries, each expanded on its own (as SillyTavern does), one per line."""
    return "\n".join(t for t in (expand(text, env).strip() for text in texts) if t)


def note_message(role: NoteRole, text: str) -> ChatMessage:
    return {"role": role, "content": text}


def inject_notes(window: Sequence[ChatMessage], notes: Sequence[DepthNote]) -> list[ChatMessage]:
    """`window` with `notes` at their depths, counted in chat messages: a part of
    the summary placed in the window (`recap`) goes with the message before it."""
    runs: list[list[ChatMessage]] = []
    for message in window:
        if runs and message.get("recap"):
            runs[-1].append(message)
        else:
            runs.append([message])
    return [m for run in inject(runs, notes, lambda role, text: [note_message(role, text)]) for m in run]


def place_notes(plain: Sequence[ChatMessage], at_depth: Sequence[DepthNote], env: MacroEnv) -> tuple[list[ChatMessage], list[DepthNote]]:
    """The window with the notes (expanded with this turn's values) at their depths, and the notes as placed."""
    notes = [n for n in (replace(n, text=expand(n.text, env).strip()) for n in at_depth) if n.text]
    return inject_notes(plain, notes), notes


def note_layers(notes: Sequence[DepthNote]) -> list[tuple[str, str, int]]:
    """(name, text, messages) of each kind of note placed, in SillyTavern's order."""
    out: list[tuple[str, str, int]] = []
    for name in LAYER_ORDER:
        mine = [n for n in notes if n.layer == name]
        if mine:
            shown = "\n".join(f"<at depth {n.depth}, as {n.role}>\n{n.text}" for n in mine)
            out.append((name, shown, len({(n.depth, n.role) for n in mine})))
    return out


async def layer_tokens(layers: Sequence[tuple[str, str]], messages: list[ChatMessage], plain: list[ChatMessage],
                       notes: Sequence[DepthNote], count: CountPrompt) -> tuple[list[int], int]:
    """Tokens of each layer ((name, text), in prompt order) and of the whole prompt:
    the whole counted once as the backend renders it, each layer as the
    difference between the prompts that end before and after it, so the figures
    add up to the total and no chat-template framing is counted twice. The
    closing message's two layers are split by counting the tail alone (the
    join between them goes to the passages)."""
    head = messages[0]
    at = next(i for i, (name, _) in enumerate(layers) if name == "window")
    head_layers = [i for i in range(at) if layers[i][1]]
    placed = [i for i in range(at + 1, len(layers)) if layers[i][0] not in CLOSING]
    tail = next((i for i, (name, text) in enumerate(layers) if name == "tail" and text), None)
    passages = next((i for i, (name, text) in enumerate(layers) if name == "passages" and text), None)
    with_head = await count([head])
    figures = [0] * len(layers)
    parts: list[str] = []
    before = 0
    for i in head_layers:  # each growing prefix of the leading system message
        parts.append(layers[i][1])
        upto = with_head if i == head_layers[-1] else await count([{"role": "system", "content": "\n\n".join(parts)}])
        figures[i], before = upto - before, upto
    before = await count([head, *plain]) if plain else with_head
    figures[at] = before - with_head
    applied: list[DepthNote] = []
    for i in placed:
        applied += [n for n in notes if n.layer == layers[i][0]]
        upto = await count([head, *inject_notes(plain, applied)])
        figures[i], before = upto - before, upto
    total = await count(messages) if tail is not None or passages is not None else before
    closing = total - before
    if passages is not None and tail is not None:
        # The closing message holds both: the tail (short, and much the same every turn) counted on its own, the
        # passages the rest, so a turn counts no third whole prompt for them (the passages change every turn).
        alone = await count([{"role": "system", "content": layers[tail][1]}]) - await count([{"role": "system", "content": ""}])
        figures[tail] = min(max(alone, 0), closing)
        figures[passages] = closing - figures[tail]
    elif passages is not None:
        figures[passages] = closing
    elif tail is not None:
        figures[tail] = closing
    return figures, total
