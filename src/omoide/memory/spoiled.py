"""Memory work a model spoiled, told apart from memory worth keeping: text that
repeats its instructions, keeps none of the names and numbers of what it
covers, makes up names nobody said, or lists guesses instead of telling."""

from __future__ import annotations

import re
from collections.abc import Sequence

from omoide.memory.extract import names_in, pieces

_WORDS = re.compile(r"[\w']+")
_CODE = re.compile(r"\b(?:\w*[A-Za-z]\w*\d\w*|\w*\d\w*[A-Za-z]\w*|\d{3,})\b")


def salient_words(lines: Sequence[str], *, user: str, character: str) -> set[str]:
    """The names and numbers of what `lines` say (casefolded): what a summary
    of them that kept anything must carry at least one of."""
    out: set[str] = set()
    skip = {user.casefold(), character.casefold()}
    for _, _, text in pieces(lines):
        out |= {name.casefold() for name in names_in(text) if name.casefold() not in skip}
        # A counter ("message 12") is no fact; a number with letters or of three digits is ("B-1001", "1984").
        out |= {m.group().casefold() for m in _CODE.finditer(text)}
    return out


def echoes(written: str, instructions: str, *, size: int = 4, share: float = 0.3) -> bool:
    """`written` repeats its instructions: a good part of its runs of `size`
    words stand in them (a small model's "Sentence Structure Guide: in this
    paragraph, focus on ...")."""
    words = _WORDS.findall(written.casefold())
    if len(words) < size:
        return False
    told = _WORDS.findall(instructions.casefold())
    known = {tuple(told[i: i + size]) for i in range(len(told) - size + 1)}
    runs = [tuple(words[i: i + size]) for i in range(len(words) - size + 1)]
    return sum(run in known for run in runs) >= share * len(runs)


def invented(written: str, *, instructions: str, lines: Sequence[str]) -> list[str]:
    """The names `written` gives that neither what it covers nor its
    instructions (the card among them) hold: what a model made up."""
    known = set(_WORDS.findall("\n".join([*lines, instructions]).casefold()))
    return list(dict.fromkeys(n for n in names_in(written) if n.casefold() not in known))


_GUESS = re.compile(r"[^.!?…\n]*\?")


def guesses(written: str) -> bool:
    """`written` is mostly candidates with question marks ("Biscuit? Mochi? Comet? ...
    Honestly I don't know."): at least three questions, and they make up most of
    what it says."""
    asked = _GUESS.findall(written)
    said = len(re.sub(r"\s+", " ", written).strip())
    return len(asked) >= 3 and sum(len(q.strip()) for q in asked) >= 0.4 * max(said, 1) - 3 * len(asked)


def spoiled(written: str, *, instructions: str, lines: Sequence[str], user: str, character: str,
            least_names: int = 2) -> str | None:
    """Why memory work that `written` is must be refused, or None: it repeats its
    instructions; it keeps none of the names and numbers of what it covers
    (checked when what it covers holds at least `least_names` of them); or it
    makes up more names (two or more) than it keeps."""
    if echoes(written, instructions):
        return "the model repeated its instructions instead of summarizing"
    if guesses(written):
        return "the model listed guesses instead of summarizing"
    wanted = salient_words(lines, user=user, character=character)
    folded = written.casefold()
    kept = [w for w in wanted if re.search(rf"(?<![\w]){re.escape(w)}(?![\w])", folded)]
    if len(wanted) >= least_names and not kept:
        return "the model's summary kept none of the names and numbers it covers"
    made_up = invented(written, instructions=instructions, lines=lines)
    if len(made_up) >= 2 and len(made_up) >= len(kept):
        return f"the model's summary names what nobody said ({', '.join(made_up[:3])})"
    return None
