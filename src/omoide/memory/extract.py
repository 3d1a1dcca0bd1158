"""The extractive writer: memory work that no model can spoil.

From a stretch of dated chat lines (`[03/04 19:03] Kai: ...`) it keeps, word for
word and with their stamps, the sentences most likely to be asked back, within a
budget of characters, in the order they were said. It ranks by what carries
information in any wording, the same for every speaker (the character's words
about herself are asked back as often as the user's): names, numbers and dates,
words rare in this stretch, someone telling of their own life, corrections, and
what comes up again later. A fragment ("Maizuru.") is kept with the sentence it
opens, and a sentence that points back with the one before it. It knows nothing of what will be asked: the memory
check's writer oracle runs it to measure what a design keeps when the writer
cannot know the answer key, and memory work falls back on it when a model's
summary, memo or diary compression fails or is rejected.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace

from omoide.memory.weights import STOPWORDS

_LINE = re.compile(r"^\s*(?:[-•]\s*)?(\[[^\]]{5,40}\])?\s*(?:([^:\[\]\n]{1,40}):\s+)?(.*)$")
_SENTENCE = re.compile(r"(?<=[.!?…])\s+")
_REPORT = re.compile(r"\s(?=(?:\[[^\]]{5,40}\]\s*)?[A-Z][\w.'’-]*(?:\s[A-Z][\w.'’-]*){0,3} said:\s)")
"""Where memory's own words start the next speaker's line ("… [03/05 19:03] Kai said: …", or with no stamp when
it is the one before's): a sentence before it may end with no stop (a small model's replies often do), and must
not swallow it."""
_PROPER = re.compile(r"\b[A-Z][a-zà-ÿ]+")
_NUMBER = re.compile(r"\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|twenty|hundred|thousand)\b", re.I)
_TIME_WORDS = re.compile(
    r"\b(?:today|tonight|yesterday|tomorrow|last (?:week|weekend|month|year|night|\w+day)|next (?:week|weekend|month|year|\w+day)"
    r"|ago|since|monday|tuesday|wednesday|thursday|friday|saturday|sunday|january|february|march|april|may|june|july"
    r"|august|september|october|november|december|birthday|anniversary)\b", re.I)
_QUESTION = re.compile(r"\?\s*$")
_STOP_NAMES = frozenset({"I", "I'm", "I've", "I'll", "I'd", "Oh", "Ah", "Mm", "Well", "Yes", "No", "OK", "Okay", "She",
                         "He", "They", "We", "You", "It", "The", "A", "An", "This", "That", "Her", "His", "My", "Your"})
_WHO = r"(?:I|he|she|they|we)"
_WHOSE = r"(?:my|his|her|their|our)"
_DISCLOSURES = tuple(re.compile(p, re.I) for p in (
    # what someone or something of theirs is called
    r"\b(?:called|named|name is|name's)\b",
    # where they live, come from, work; what they do; what changed in their life
    rf"\b{_WHO}(?:'ve| have)?\s+(?:\w+\s+)?(?:live[sd]?|moved|grew up|was born|work(?:s|ed)?|teach(?:es)?|study|studies"
    r"|started|quit|retired|applied|adopted|married|ran (?:my|his|her|their) first)\b"
    r"|\b(?:getting|got|get|is|are) (?:married|engaged|divorced)\b|\b(?:is|are) expecting a baby\b",
    # their people and animals
    rf"\b{_WHOSE}\s+(?:\w+\s+)?(?:sister|brother|mother|mum|mom|father|dad|parents|wife|husband|partner|son|daughter"
    r"|grand\w+|aunt|uncle|cousin|friend|boss|colleague|neighbour|neighbor|cat|dog|pet|kitten|puppy|horse|bird|birthday)\b",
    # what they like and cannot stand
    r"\b(?:can't stand|cannot stand|can't bear|hate|hates|love|loves|adore|adores|prefer|prefers|favou?rite|allergic"
    r"|can't get enough|could \w+ .{0,40}all day|not a fan)\b",
    # promises and plans
    r"\b(?:promise[sd]?|swear|I'll bring|will bring|going to|plan(?:ning)? to|planning)\b",
    # corrections
    r"\b(?:actually|misspoke|not anymore|no longer|I meant)\b",
    # what they did together
    r"\b(?:we|us)\b.*\btogether\b|\bwe\s+(?:finally\s+)?(?:went|made|baked|cooked|built|painted|watched|saw|visited"
    r"|climbed|walked|swam|played|met|\w+ed)\b",
))
"""Kinds of lasting fact about someone (what they are called, where they live and work, their people, likes,
promises, corrections, what was done together), in the first and the third person. A bonus for every speaker alike."""


DISCLOSURE = 4.0
"""What each kind of lasting fact a sentence tells adds to its score (two at most)."""


def disclosures(text: str) -> int:
    """How many kinds of lasting fact about someone `text` tells."""
    return sum(1 for pattern in _DISCLOSURES if pattern.search(text))


_CORRECTION = re.compile(r"\b(?:actually|misspoke|not anymore|no longer|I meant|scratch that|correction)\b", re.I)
"""Someone correcting what was said before: the newer value must outlast the old one."""
_FIRST_PERSON = re.compile(r"\b(?:I|I'm|I've|I'll|I'd|me|my|mine|myself|we|us|our|they|them|their|they're|they've)\b", re.I)
"""Someone speaking of themselves (in memory's reported lines, "they"): with something rare in it, a sentence tells
of their own life, which is asked back like anything else."""
_ACTION = re.compile(r"\*[^*\n]{1,400}\*")
"""Roleplay's actions between asterisks: what a character does on stage, weighed as nothing told."""
_CONTENT = re.compile(r"[^\W\d_][\w'’-]{3,}")
TOLD = 5.0
"""The score from which a sentence tells something that lasts (routines are then found among these)."""
_POINTS_BACK = re.compile(r"^(?:It|It's|Its|He|He's|She|She's|They|They're|That|That's|This|There|Scratch that|Actually"
                          r"|No|Yes|Yeah)\b")
_FRAGMENT_WORDS = 3
"""A sentence of at most this many words ("Maizuru.", "Lilies.") is the subject of the one after it."""


@dataclass(frozen=True, slots=True)
class Sentence:
    stamp: str
    speaker: str
    text: str
    order: int
    score: float
    told: bool = False
    """It tells something that lasts (its score is at least `TOLD`), whoever said it."""
    passing: float = 0.0
    """What the sentence would weigh as passing detail: its score once it is found to be a routine."""

    @property
    def line(self) -> str:
        """`[stamp] Speaker: sentence`, as a memory task quotes it."""
        return _quoted(self.stamp, self.speaker, self.text)


def _quoted(stamp: str, speaker: str, text: str) -> str:
    return " ".join(part for part in (stamp, f"{speaker}:" if speaker else "", text) if part)


def _name_spans(text: str) -> list[re.Match[str]]:
    out = []
    for m in _PROPER.finditer(text):
        before = text[: m.start()].rstrip()
        if not before or before[-1] in ".!?*\"'“”(:;—–-…" or m.group() in _STOP_NAMES:
            continue
        out.append(m)
    return out


def names_in(text: str) -> list[str]:
    """Capitalised words standing mid-sentence (a sentence's, an action's or a
    quotation's first word is capitalised for other reasons), pronouns left out."""
    return [m.group() for m in _name_spans(text)]


def _places_and_people(text: str, skip: tuple[str, ...]) -> int:
    """The names in `text`, a run of capitalised words ("Carrow Point") counted once."""
    count, last_end = 0, -1
    for m in _name_spans(text):
        if m.group() in skip:
            continue
        if last_end < 0 or text[last_end: m.start()].strip():
            count += 1
        last_end = m.end()
    return count


Rarity = dict[str, float]
"""Word -> how rare it is in the material (0..1): log(sentences / sentences holding it) / log(sentences)."""


def content_words(text: str) -> set[str]:
    """The words of `text` that can tell something (casefolded, common words left out)."""
    return {w.casefold() for w in _CONTENT.findall(_ACTION.sub(" ", text))} - STOPWORDS


def rarity(texts: Sequence[str]) -> Rarity:
    """How rare each content word of `texts` is among them: what this story says
    once carries more than what it says all the time, in any wording."""
    held: dict[str, int] = {}
    for text in texts:
        for word in {w.casefold() for w in _CONTENT.findall(text)}:
            held[word] = held.get(word, 0) + 1
    total = max(len(texts), 2)
    spread = math.log(total)
    return {w: max(0.0, math.log(total / n) / spread) for w, n in held.items() if w not in STOPWORDS}


def _score(text: str, user: str, character: str, rare: Rarity, later: Mapping[str, int]) -> tuple[float, float]:
    """How much `text` tells, the same for every speaker, from what carries
    information in any wording: its names, numbers and dates, its words rare in
    this material, someone telling of their own life, a correction, and words
    said again later (what comes up again is what matters). And what it would
    weigh as passing detail, once it is found to be a routine."""
    if _QUESTION.search(text) or len(text) < 12:
        return 0.0, 0.0
    spoken = _ACTION.sub(" ", text)  # *She wipes the counter.*: stage business, not what anyone told
    if len(spoken.strip()) < 12:
        return 0.0, 0.0
    text = spoken
    proper = _places_and_people(text, (character, user))
    named = sorted((rare.get(n.casefold(), 1.0) for n in names_in(text) if n not in (character, user)), reverse=True)
    words = {w.casefold() for w in _CONTENT.findall(text)} - STOPWORDS
    rare_words = sorted((rare.get(w, 1.0) for w in words), reverse=True)[:6]
    # A name weighs by how rare it is in the story: one said every evening is no news
    detail = 2.0 * sum(named[:3]) + 1.5 * bool(_NUMBER.search(text)) + 1.0 * bool(_TIME_WORDS.search(text))
    detail += sum(rare_words) * 0.75
    own = bool(_FIRST_PERSON.search(text)) and (proper > 0 or sum(r > 0.6 for r in rare_words) >= 2)
    again = min(sum(1 for w in words if later.get(w, 0) > 0 and rare.get(w, 1.0) > 0.5), 2)
    score = detail + 1.5 * own + 2.0 * bool(_CORRECTION.search(text)) + 1.0 * again + DISCLOSURE * min(disclosures(text), 2)
    wordy = 1.0 + max(0, len(text) - 220) / 220  # a long sentence tells less per character
    # A piece that starts cut ("…u can do the same") is the end of someone's line: whose, it no longer says
    if text.startswith("…"):
        score = min(score, TOLD - 0.5)
    return score / wordy, detail * 0.5 / wordy


def _reported(speaker: str) -> bool:
    """`speaker` heads memory's own words ("Kai said", or none), not a chat line: only
    there does a sentence's own "[stamp] Name said:" tell who said it. (A reply may
    write "[48/5/7] KAREN: ..." in the middle of itself; that is still the reply's.)"""
    return not speaker or speaker.endswith(" said")


def pieces(lines: Iterable[str]) -> Iterator[tuple[str, str, str]]:
    """Each sentence of `lines` as (stamp, speaker, text): a summary's sentence
    keeps its own date and speaker; one that only points back ("It's called
    Kestrel.") carries the one before it, which alone says what it names."""
    for line in lines:
        found = _LINE.match(line)
        if not found or not found.group(3).strip():
            continue
        stamp, speaker, text = found.group(1) or "", (found.group(2) or "").strip(), found.group(3).strip()
        before: tuple[str, str] | None = None  # the speaker and text of the sentence before
        held: str | None = None  # a fragment waiting for the sentence it opens
        said, by = stamp, speaker
        parts = _REPORT.split(text) if _reported(speaker) else [text]
        for n, piece in enumerate(sentence for part in parts for sentence in _SENTENCE.split(part)):
            piece = piece.strip()
            if not piece:
                continue
            if _reported(speaker) and (own := _LINE.match(piece)) and (own.group(1) or own.group(2)) \
                    and _reported(own.group(2) or ""):
                said, by, piece = own.group(1) or said, (own.group(2) or by).strip(), own.group(3).strip()
            if held is not None:
                piece, held = f"{held} {piece}", None
            elif before is not None and before[0] == by and _POINTS_BACK.match(piece):
                piece = f"{before[1]} {piece}"
            if _fragment(piece):
                held = piece  # "Maizuru." tells nothing alone: it is the subject of what follows
                continue
            before = (by, piece)
            yield said, by, piece
        if held is not None:
            yield said, by, held


def _fragment(piece: str) -> bool:
    """A name or a thing alone ("Maizuru.", "Matt Patterson.", "Lilies."), not a sentence that says something."""
    words = piece.split()
    if len(words) > _FRAGMENT_WORDS or _QUESTION.search(piece) or not words:
        return False
    first = words[0].strip("*\"'“”(").rstrip(".,!…")
    return len(words) == 1 or (first[:1].isupper() and first not in _STOP_NAMES)


def sentence_lines(lines: Iterable[str]) -> list[str]:
    """Each sentence of `lines` as `[stamp] Speaker: sentence` (as `Sentence.line`), unscored."""
    return [_quoted(*piece) for piece in pieces(lines)]


def sentences(lines: Iterable[str], *, user: str, character: str, rare: Rarity | None = None) -> list[Sentence]:
    """The sentences of `lines`, scored against each other (`rarity`, and which
    words come up again later), or against the whole story when `rare` says how
    rare its words are there (memory/rarity.py). Every speaker's sentences are
    scored alike."""
    found = list(pieces(lines))
    rare = {**rarity([text for _, _, text in found]), **(rare or {})}
    later: dict[str, int] = {}
    scored: list[Sentence] = []
    for order in reversed(range(len(found))):
        said, by, piece = found[order]
        score, passing = _score(piece, user, character, rare, later)
        scored.append(Sentence(said, by, piece, order, score, score >= TOLD, passing))
        for word in {w.casefold() for w in _CONTENT.findall(piece)}:
            later[word] = later.get(word, 0) + 1
    return scored[::-1]


_FRAME_WORD = re.compile(r"[a-z][a-z']{2,}")
ROUTINE_OVERLAP = 0.75
"""Two sentences say the same kind of thing when this share of the fewer words of the two (names and numbers
aside) stands in both: a sentence carried on by the one after it ("... It rained for 5 hours.") still matches."""
ROUTINE_SPAN = 64
"""The newer told sentences a sentence is compared with: a routine comes back within a stretch, and the work stays
linear in a long conversation's sentences."""


def _frame(text: str) -> frozenset[str]:
    """What `text` says with its names and numbers taken out: its other content words."""
    named = {name.casefold() for name in names_in(text)}
    return frozenset(w for w in _FRAME_WORD.findall(text.casefold()) if w not in STOPWORDS and w not in named)


def _alike(a: frozenset[str], b: frozenset[str]) -> bool:
    return len(a) >= 3 and len(b) >= 3 and len(a & b) >= ROUTINE_OVERLAP * min(len(a), len(b))


def routine_last(found: Sequence[Sentence]) -> list[Sentence]:
    """`found` with only the newest of the told sentences that say the same kind of thing
    ("my shoes are wet from the walk in Ferrow", and again in Lindby, and again...)
    still told: the others weigh as passing detail. What is said again and again with
    another name each time is a routine; what is said once stands out."""
    frames: list[frozenset[str]] = []
    out: list[Sentence] = []
    for s in sorted(found, key=lambda s: -s.order):
        if s.told:
            frame = _frame(s.text)
            if any(_alike(frame, seen) for seen in frames[-ROUTINE_SPAN:]):
                s = replace(s, told=False, score=s.passing)
            frames.append(frame)
        out.append(s)
    return out


def extract(lines: Sequence[str], *, user: str, character: str, budget_chars: int, least: float = 3.0,
            most: int | None = None, rare: Rarity | None = None) -> list[str]:
    """The best sentences of `lines` (at most `most` of them) within
    `budget_chars`, in the order said, as `[stamp] Speaker: sentence` (the stamp
    once per line of the result). `rare`: as `sentences`."""
    found = [s for s in routine_last(sentences(lines, user=user, character=character, rare=rare))
             if s.score >= least]
    chosen: list[Sentence] = []
    used = 0
    # What tells most first, whoever said it; the newer of two equals: later facts correct earlier
    for s in sorted(found, key=lambda s: (-s.score, -s.order)):
        size = len(s.stamp) + len(s.speaker) + len(s.text) + 4
        if used + size > budget_chars or (most is not None and len(chosen) >= most):
            continue
        if any(s.text in c.text or c.text in s.text for c in chosen if c.speaker == s.speaker):
            continue  # a sentence and the one that carries it on, or the same said again (a rewrite re-dates its first)
        chosen.append(s)
        used += size
    chosen.sort(key=lambda s: s.order)
    return [s.line for s in chosen]


def material_lines(task: str, heading: str) -> list[str]:
    """The dated lines of a memory task after its material's heading ("Conversation:")."""
    at = task.rfind(f"{heading}:\n")
    body = task[at + len(heading) + 2:] if at >= 0 else task
    return [line for line in body.splitlines() if line.strip()]


_THIRD_PERSON = ((r"\bI'm\b", "they're"), (r"\bI am\b", "they are"), (r"\bI was\b", "they were"), (r"\bI've\b", "they've"),
                 (r"\bI'll\b", "they'll"), (r"\bI'd\b", "they'd"), (r"\bI\b", "they"), (r"\bmy\b", "their"),
                 (r"\bMy\b", "Their"), (r"\bmyself\b", "themselves"), (r"\bme\b", "them"), (r"\bmine\b", "theirs"))
"""Said of anyone: 'they' fits every speaker, and the verb after it ("they live") stays right."""


def reported(line: str) -> str:
    """`[03/02 19:03] Kai: my cat is Biscuit.` as a memory says it:
    `[03/02 19:03] Kai said: their cat is Biscuit.` (a summary that opens with a
    speaker's name reads as a chat reply, and is refused as one)."""
    found = _LINE.match(line)
    if not found:
        return line
    stamp, speaker, text = found.group(1) or "", (found.group(2) or "").strip(), found.group(3).strip()
    for first, third in _THIRD_PERSON:
        text = re.sub(first, third, text)
    said = f"{speaker}: {text}" if speaker.endswith(" said") else f"{speaker} said: {text}" if speaker else text
    return f"{stamp} {said}".strip()


def nothing_telling(who: str, other: str) -> str:
    """What memory in the story's own words says of a stretch none of whose sentences tells anything lasting."""
    return f"{who} and {other} talked; nothing with a name, number or date was said."


def fallback_summary(lines: Sequence[str], *, user: str, character: str, budget_chars: int,
                     rare: Rarity | None = None) -> str:
    """A summary no model wrote: the sentences that carry names, numbers, dates
    and places, word for word, told as said ("Kai said: ..."), or a plain line
    when nothing in them does."""
    kept = extract(lines, user=user, character=character, budget_chars=budget_chars, rare=rare)
    if not kept:
        return nothing_telling(user, character)
    return " ".join(reported(line) for line in kept)
