"""SillyTavern's macros: `{{char}}`, `{{random::a::b}}`, `{{time}}` and the rest,
expanded in card fields, greetings, lore, notes and system prompts.

Follows SillyTavern's documentation (docs.sillytavern.app, Usage > Macros):
names are case-insensitive; arguments follow `::`, a single `:` (legacy) or a
space; whitespace around names and separators is ignored; macros nest and the
inner ones are expanded first; an unknown macro is left as written; the legacy
markers `<USER>`, `<BOT>`, `<CHAR>`, `<GROUP>` and `<CHARIFNOTGROUP>` work too.

Macros are data, never code. One left-to-right pass: a value put in (a name,
the last message) is never read again for macros, so nothing can expand
itself; nesting, the number of macros and the length of the result are
bounded, and past a bound the rest of the text is kept as written.
"""

from __future__ import annotations

import hashlib
import math
import random as random_module
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone, tzinfo

from omoide.domain.chat import Message, Role

MAX_NESTING = 6
"""Macros inside macros inside macros...: deeper ones are kept as written."""
MAX_MACROS = 2000
"""Macros expanded in one text; the rest are kept as written."""
MAX_OUTPUT_CHARS = 1_000_000
"""An expansion that grows past this keeps the rest of the text as written."""
MAX_REPEAT = 100
"""`{{newline::N}}` and `{{space::N}}` give at most this many."""
MAX_DICE, MAX_SIDES = 100, 1_000_000

_LEGACY = {"user": "user", "bot": "char", "char": "char", "group": "group", "charifnotgroup": "charifnotgroup"}
_TOKENS = re.compile(r"\{\{|\}\}|<(USER|BOT|CHAR|GROUP|CHARIFNOTGROUP)>", re.IGNORECASE)
_NAME = re.compile(r"\s*(//|[A-Za-z_][\w-]*(?:[+-]\d+)?)")
_DICE = re.compile(r"^(\d*)d(\d+)\s*(?:([+-])\s*(\d+))?$", re.IGNORECASE)
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December")
_DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


@dataclass(frozen=True, slots=True)
class MacroEnv:
    """What the macros expand to at one moment of one chat."""

    char: str
    user: str
    group: tuple[str, ...] = ()
    """The characters of a group scene; empty in a one-on-one chat."""
    now: datetime | None = None
    """The clock the time macros read; None leaves them as written."""
    tz: tzinfo | None = None
    """Where the clock is read (None: this machine's local time, as SillyTavern uses the browser's)."""
    input: str = ""
    """What the input box holds. SillyTavern empties it before building a reply's prompt, so there it is empty."""
    last_message: str = ""
    last_char_message: str = ""
    last_user_message: str = ""
    idle_since: datetime | None = None
    """When you wrote before your last message ({{idle_duration}}); None: 'just now'."""
    original: str | None = None
    """What {{original}} stands for (a default this field replaces); None leaves it as written."""
    pick_seed: str = ""
    """The chat's identity: {{pick}} chooses the same item every time for the same chat, text and place."""
    rng: random_module.Random | None = None
    """For {{random}} and {{roll}}; a seeded one makes them repeatable."""


class _Trim:
    """Where {{trim}} stood: the newlines around it go."""


_TRIM = _Trim()
Piece = str | _Trim


class _Run:
    """The state of one expansion: its budgets, and {{original}} used once."""

    def __init__(self, env: MacroEnv, raw: str) -> None:
        self.env = env
        self.raw = raw
        self.macros = 0
        self.chars = 0
        self.original_used = False
        self.exhausted = False
        self.rng = env.rng or random_module.Random()
        self.close = _matching_braces(raw)

    def spend(self, text: str) -> bool:
        self.macros += 1
        self.chars += len(text)
        if self.macros > MAX_MACROS or self.chars > MAX_OUTPUT_CHARS:
            self.exhausted = True
        return not self.exhausted


def _matching_braces(text: str) -> dict[int, int]:
    """Where each `{{` closes (the index of its `}}`), in one pass."""
    stack: list[int] = []
    pairs: dict[int, int] = {}
    for token in _TOKENS.finditer(text):
        if token.group(0) == "{{":
            stack.append(token.start())
        elif token.group(0) == "}}" and stack:
            pairs[stack.pop()] = token.start()
    return pairs


def expand(text: str, env: MacroEnv) -> str:
    """`text` with every macro SillyTavern knows (of those listed in
    docs/sillytavern.md) replaced by its value."""
    if not text or ("{{" not in text and "<" not in text):
        return text
    run = _Run(env, text)
    return _join(_expand(run, 0, len(text), 0))


def _join(pieces: Sequence[Piece]) -> str:
    out = ""
    trim_next = False
    for piece in pieces:
        if isinstance(piece, _Trim):
            out = out.rstrip("\r\n")
            trim_next = True
            continue
        out += piece.lstrip("\r\n") if trim_next else piece
        trim_next = trim_next and not piece.strip("\r\n")
    return out


def _expand(run: _Run, start: int, end: int, depth: int) -> list[Piece]:
    raw, i = run.raw, start
    pieces: list[Piece] = []
    for token in _TOKENS.finditer(raw, start, end):
        if token.start() < i:
            continue
        if run.exhausted:
            break
        pieces.append(raw[i:token.start()])
        i = token.end()
        marker = token.group(1)
        if marker:
            named = _named(run, _LEGACY[marker.lower()])
            pieces.append(named if named is not None and run.spend(named) else token.group(0))
            continue
        close = run.close.get(token.start()) if token.group(0) == "{{" else None
        if close is None or close + 2 > end:
            pieces.append(token.group(0))
            continue
        i = close + 2
        if raw[token.end():close].lstrip().startswith("//"):
            pieces.append("")  # {{// a comment}}: gone, whatever it holds
            continue
        if depth >= MAX_NESTING:
            pieces.append(raw[token.start():i])
            continue
        body = _join(_expand(run, token.end(), close, depth + 1))
        value = _evaluate(run, body, token.start())
        if value is None or not run.spend(value if isinstance(value, str) else ""):
            pieces.append(raw[token.start():i])
        else:
            pieces.append(value)
    pieces.append(raw[i:end])
    return pieces


def _split_args(rest: str) -> list[str]:
    """The arguments after a macro's name: `::a::b`, `:a` (legacy) or ` a`."""
    if rest.startswith("::"):
        return [a.strip() for a in rest[2:].split("::")]
    if rest.startswith(":"):
        return [rest[1:].strip()]
    if rest[:1].isspace():
        return [rest.strip()]
    return []


def _evaluate(run: _Run, body: str, offset: int) -> Piece | None:
    """The value of the macro `{{body}}` (body already expanded), or None when it is unknown."""
    found = _NAME.match(body)
    if found is None:
        return None
    name, rest = found.group(1).lower(), body[found.end():]
    if rest.strip() == "":
        rest = ""
    if name in ("random", "pick"):
        items = _choices(rest)
        if items is None:
            return None
        if not items:
            return ""
        if name == "random":
            return items[run.rng.randrange(len(items))]
        return items[_pick_index(run, offset, len(items))]
    if name == "roll":
        formula = _split_args(rest)
        return _roll(run.rng, formula[0]) if formula else None
    args = _split_args(rest)
    if rest and not args:
        return None  # `{{user2}}` is another name, not {{user}}
    if name == "trim":
        return _TRIM
    if name in ("newline", "space"):
        count = _count(args)
        return None if count is None else ("\n" if name == "newline" else " ") * count
    if name == "noop":
        return ""
    if name == "original":
        if run.env.original is None:
            return None
        if run.original_used:
            return ""  # SillyTavern gives the original once; a second {{original}} is empty
        run.original_used = True
        return run.env.original
    if name == "time" and args and args[0].upper().startswith("UTC"):
        return _utc_time(run.env, args[0][3:])
    if name.startswith("time_utc"):
        return _utc_time(run.env, name[8:]) if not args else None
    if args:
        return None
    return _named(run, name)


def _named(run: _Run, name: str) -> str | None:
    env = run.env
    match name:
        case "char":
            return env.char
        case "user":
            return env.user
        case "group":
            return ", ".join(env.group) if env.group else env.char
        case "charifnotgroup":
            return "" if env.group else env.char
        case "input":
            return env.input
        case "lastmessage":
            return env.last_message
        case "lastcharmessage":
            return env.last_char_message
        case "lastusermessage":
            return env.last_user_message
    if env.now is None:
        return None
    now = env.now.astimezone(env.tz)
    match name:
        case "time":
            return _clock(now)
        case "date":
            return f"{_MONTHS[now.month - 1]} {now.day}, {now.year}"
        case "weekday":
            return _DAYS[now.weekday()]
        case "isotime":
            return f"{now:%H:%M}"
        case "isodate":
            return f"{now:%Y-%m-%d}"
        case "idle_duration" | "idleduration":
            return "just now" if env.idle_since is None else humanize(env.now - env.idle_since)
    return None


def _clock(moment: datetime) -> str:
    """moment.js's `LT` in English: 9:05 PM."""
    hour = moment.hour % 12 or 12
    return f"{hour}:{moment.minute:02d} {'AM' if moment.hour < 12 else 'PM'}"


def _utc_time(env: MacroEnv, offset: str) -> str | None:
    if env.now is None:
        return None
    try:
        hours = int(offset.strip() or "0")
    except ValueError:
        return None
    if not -14 <= hours <= 14:
        return None
    return _clock(env.now.astimezone(timezone(timedelta(hours=hours))))


def _count(args: list[str]) -> int | None:
    if not args:
        return 1
    if not args[0].isdigit():
        return None
    return min(int(args[0]), MAX_REPEAT)


def _choices(rest: str) -> list[str] | None:
    """{{random}}'s and {{pick}}'s items: split on `::` when there is one, else on
    commas (trimmed, `\\,` keeps a comma), as SillyTavern does."""
    if rest.startswith("::"):
        listing = rest[2:]
    elif rest.startswith(":") or rest[:1].isspace():
        listing = rest[1:]
    else:
        return None  # `{{random}}` alone, or `{{randomly}}`: not this macro
    if "::" in listing:
        return [item.strip() for item in listing.split("::")]
    held = "\x00"
    return [item.strip().replace(held, ",") for item in listing.replace("\\,", held).split(",")]


def _pick_index(run: _Run, offset: int, size: int) -> int:
    """The same item for the same chat, the same text and the same place in it."""
    text_hash = hashlib.sha256(run.raw.encode("utf-8", "surrogatepass")).hexdigest()
    seed = f"{run.env.pick_seed}-{text_hash}-{offset}".encode("utf-8", "surrogatepass")
    return int.from_bytes(hashlib.sha256(seed).digest()[:8], "big") % size


def _roll(rng: random_module.Random, formula: str) -> str:
    """Dice: `1d20`, `d6`, `2d6+3`, or a bare number of sides. An invalid formula gives '' as in SillyTavern."""
    formula = formula.strip()
    if formula.isdigit():
        formula = f"1d{formula}"
    found = _DICE.match(formula)
    if found is None:
        return ""
    dice, sides = int(found.group(1) or "1"), int(found.group(2))
    if not (1 <= dice <= MAX_DICE and 1 <= sides <= MAX_SIDES):
        return ""
    total = sum(rng.randint(1, sides) for _ in range(dice))
    if found.group(4):
        modifier = min(int(found.group(4)), MAX_SIDES)
        total += modifier if found.group(3) == "+" else -modifier
    return str(total)


def humanize(span: timedelta) -> str:
    """A duration as moment.js's `humanize()` says it in English ('a few seconds', '3 hours', 'a month')."""
    seconds = abs(span.total_seconds())

    def rounded(value: float) -> int:
        return math.floor(value + 0.5)

    days = seconds / 86_400
    months = days * 4800 / 146_097
    steps: list[tuple[bool, str]] = [
        (rounded(seconds) <= 44, "a few seconds"),
        (rounded(seconds) < 45, f"{rounded(seconds)} seconds"),
        (rounded(seconds / 60) <= 1, "a minute"),
        (rounded(seconds / 60) < 45, f"{rounded(seconds / 60)} minutes"),
        (rounded(seconds / 3600) <= 1, "an hour"),
        (rounded(seconds / 3600) < 22, f"{rounded(seconds / 3600)} hours"),
        (rounded(days) <= 1, "a day"),
        (rounded(days) < 26, f"{rounded(days)} days"),
        (rounded(months) <= 1, "a month"),
        (rounded(months) < 11, f"{rounded(months)} months"),
        (rounded(months / 12) <= 1, "a year"),
    ]
    return next((said for holds, said in steps if holds), f"{rounded(months / 12)} years")


def chat_values(messages: Sequence[Message]) -> dict[str, object]:
    """The chat macros' values for the path ending at the newest of `messages`
    (oldest first): the last message, the last of each side's, and when you
    wrote before your last message (SillyTavern's {{idle_duration}})."""
    said = [m for m in messages if m.role in (Role.USER, Role.ASSISTANT, Role.SYSTEM)]
    last_user = next((m for m in reversed(said) if m.role is Role.USER), None)
    last_char = next((m for m in reversed(said) if m.role is Role.ASSISTANT), None)
    idle_since: datetime | None = None
    spoken = [m for m in said if m.role is not Role.SYSTEM]
    for message in reversed(spoken[:-1]):
        if message.role is Role.USER:
            idle_since = message.created_at
            break
    return {
        "last_message": said[-1].content if said else "",
        "last_user_message": last_user.content if last_user else "",
        "last_char_message": last_char.content if last_char else "",
        "idle_since": idle_since,
    }
