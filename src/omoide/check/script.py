"""The memory check's conversation: what is planted on which simulated day,
the ordinary talk that pads it out of the verbatim window, and the questions
asked back (docs/memory-check.md).

Pure data. Kai talks with Suzune over four evenings; on the sixth day every
question is asked on a side branch (asked, answered, then undone), so no
question or answer becomes part of the story the next question is asked in.
Then the knowledge boundary: Wren is asked in a chat of her own and after
`/invite` into Suzune's chat, both before Suzune tells her the secret (she must
not know it) and after (she knows it, and from whom).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Category = Literal["single", "updated", "time", "abstention", "boundary"]
CATEGORIES: tuple[Category, ...] = ("single", "updated", "time", "abstention", "boundary")

USER = "Kai"
HOST = "suzune"
GUEST = "wren"

ABSTAIN = (
    "don't know", "do not know", "didn't tell", "did not tell", "never told", "haven't told", "have not told",
    "never mentioned", "didn't mention", "did not mention", "haven't mentioned", "not sure", "no idea",
    "don't remember", "do not remember", "can't remember", "cannot remember", "don't recall", "can't recall",
    "you never said", "haven't said", "not something you've told", "wouldn't know", "no clue",
)
"""Words of an answer that declines to invent one (casefolded containment)."""


@dataclass(frozen=True, slots=True)
class Fact:
    """Something said in the story that a later question asks back."""

    key: str
    day: int
    """The evening it is said on (1 = the first)."""
    line: str
    """What Kai says; the evidence is in it."""
    evidence: str
    """The word that shows the fact reached a prompt (casefolded)."""


@dataclass(frozen=True, slots=True)
class Probe:
    key: str
    category: Category
    question: str
    truth: str
    """The right answer, in words (for the judge and the report)."""
    expect: tuple[tuple[str, ...], ...] = ()
    """Groups of words; the answer is right when it holds one word of every group."""
    refuse: tuple[str, ...] = ()
    """Words the answer must not hold (what the character must not know)."""
    rivals: tuple[str, ...] = ()
    """An updated fact's old value: a reader answers whichever was said last."""
    abstain: bool = False
    """Right when the answer declines (`ABSTAIN`): nothing was ever said."""
    speaker: str = HOST
    days_ago: int | None = None
    """Time questions: the day asked about, counted back from today."""
    recall: str = ""
    """What a search of the transcript would look for (the recall tool)."""
    stage: Literal["day", "own_chat", "invited", "told"] = "day"
    """Where it is asked: Suzune's chat on the last day; Wren's own chat; the scene
    after /invite, before Suzune tells her; the scene after she was told."""


FACTS: tuple[Fact, ...] = (
    Fact("cat", 1, "By the way, my cat is called Biscuit. He sleeps on the radiator all day.", "biscuit"),
    Fact("home_old", 1, "I live in London these days, in a flat near the river.", "london"),
    Fact("aquarium", 1, "Today we went to the aquarium on the pier together. The jellyfish tank was my favourite.", "aquarium"),
    Fact("bicycle", 2, "I finally named my bicycle. It's called Comet, because it's fast and a bit reckless.", "comet"),
    Fact("bread", 2, "Today we baked rye bread together in your kitchen. The crust came out perfect.", "rye bread"),
    Fact("promise", 2, "I promise I'll bring you a jar of yuzu marmalade next week.", "marmalade"),
    Fact("kites", 3, "Today we flew kites on the dunes together. Mine got stuck in a pine tree.", "kites"),
    Fact("home_new", 4, "Big news: I moved to Berlin last weekend. The flat has a balcony over a canal.", "berlin"),
    Fact("porch", 4, "Today we repainted your porch together. Sky blue, like you wanted.", "porch"),
    Fact("secret", 4, "Suzune, a secret just between us: I applied for the observatory job in Reykjavik.", "reykjavik"),
)
TIME_EVENTS = {1: "aquarium", 2: "rye bread", 3: "kites", 4: "porch"}
"""The day -> what Kai and Suzune did that day (each day's evidence word)."""
DAYS = 4
ASK_DAY = 6
"""The day the questions are asked on: "three days ago" is day 3."""

TOLD = "Wren, Kai told me something: he applied for the observatory job in Reykjavik. Keep it to yourself."
"""Suzune's line in the scene that tells Wren (stored as hers: the story says she told her)."""
TELL_CUE = "Suzune, you can tell Wren about my job application."

PROBES: tuple[Probe, ...] = (
    Probe("cat", "single", "What is my cat called?", "Biscuit", (("biscuit",),), recall="cat called"),
    Probe("bicycle", "single", "What did I name my bicycle?", "Comet", (("comet",),), recall="bicycle named"),
    Probe("promise", "single", "What did I promise to bring you?", "a jar of yuzu marmalade", (("marmalade",),),
          recall="promise bring"),
    Probe("home", "updated", "Which city do I live in now?", "Berlin (he moved there from London)", (("berlin",),),
          rivals=("london",), recall="moved live city"),
    Probe("three_days", "time", "What did we do together three days ago?", "flew kites on the dunes", (("kite",),),
          days_ago=3, recall="today we together"),
    Probe("five_days", "time", "What did we do together five days ago?", "went to the aquarium on the pier",
          (("aquarium",),), days_ago=5, recall="today we together"),
    Probe("dog", "abstention", "What is my dog's name?", "nothing: Kai never mentioned a dog", abstain=True,
          recall="dog name"),
    Probe("brother", "abstention", "What does my brother do for a living?", "nothing: Kai never mentioned a brother",
          abstain=True, recall="brother work"),
    Probe("own_chat", "boundary", "Wren, do you know where I applied for a job?",
          "she must not know: Kai told only Suzune", refuse=("reykjavik", "observatory"), speaker=GUEST,
          recall="applied job", stage="own_chat"),
    Probe("invited", "boundary", "Wren, do you know where I applied for a job?",
          "she must not know: it was said before she came in", refuse=("reykjavik", "observatory"), speaker=GUEST,
          recall="applied job", stage="invited"),
    Probe("told", "boundary", "Wren, where did I apply for a job, and who told you?",
          "Reykjavik (the observatory), told by Suzune", (("reykjavik",), ("suzune",)), speaker=GUEST,
          recall="applied job", stage="told"),
)

PADDING = (
    "The rain hasn't stopped all evening, has it?",
    "I read a few chapters of a detective novel on the train.",
    "Do you think the sea looks different in the evening?",
    "My neighbour was playing the cello again last night.",
    "I tried a new tea this morning, something smoky.",
    "The trains were late again; there was fog on the line.",
    "Do you ever get tired of the same view from the window?",
    "I walked past the old cinema, they're painting it green.",
    "Someone left an umbrella on the bench outside.",
    "What kind of music do you play when the café is empty?",
    "The gulls were fighting over a sandwich at the station.",
    "I like the sound of the kettle before it boils.",
    "There's a new bakery near the station, but it closes early.",
    "I saw the first snowdrops by the road today.",
    "The lighthouse blinked all night, I counted the seconds.",
    "Do you keep the radio on while you roast the beans?",
    "My shoes are still wet from yesterday.",
    "I found an old postcard in a second-hand book.",
    "The harbour smelled of tar and salt this afternoon.",
    "I keep forgetting to buy batteries for the clock.",
)
"""Ordinary talk: nothing in it is asked back, and no evidence word is in it."""

FILLER_REPLY = "Mm. *She nods and wipes the counter.*"


def facts_on(day: int) -> list[Fact]:
    return [f for f in FACTS if f.day == day]


def padding_line(n: int) -> str:
    return PADDING[n % len(PADDING)]


def probe(key: str) -> Probe:
    return next(p for p in PROBES if p.key == key)
