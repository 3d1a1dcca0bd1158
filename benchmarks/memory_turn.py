"""What the memory of issue 32 adds to every turn: passages that come to mind,
corrections and pins, on the path a user meets (the session building a turn's
prompt), at 10,000 messages.

    python benchmarks/memory_turn.py [--sizes 10000] [--turns 20] [--estimate]

The chat comes from make_chat.py, then is made to look more like a story:
every message gets three words of a 4,096-word vocabulary drawn by Zipf's law
(so a turn's words match from a handful to thousands of messages, and the
passages layer really finds, ranks and walks to candidates, unlike make_chat's
24 words, which every message holds), one of your messages in six says "not"
or "actually" (the corrections' cue words, which are everywhere in real chats)
and 8 of them, spread over the chat, are real corrections ("Actually my cat is
Mochi-1 now, not Biscuit-1."). Suzune has 5 pins.

Each turn stores a reply and your next message (three Zipf words, then
make_chat's words: the query takes a message's first 12 content words, and
with make_chat's first it held no word the passages could find, so before
2026-12-03 this measured the passages by meaning alone), then builds the
prompt at your message with
`ChatSession.build_prompt`, as a turn does before its request: memory state,
profile, world, lore, pins, corrections, passages, the layers, the fit and the
token count (the embedded SmolLM2 tokenizer, the default setup; `--estimate`
counts at 4 characters a token instead). It does so once for each setting
below, in a rotating order, at the same head:

    all on            the defaults
    passages off      /amnesia passages
    corrections off   /amnesia corrections
    pins off          /amnesia pinned
    all three off     /amnesia passages corrections pinned

/amnesia hides the corrections and the pins, but the turn still looks them up
(`StoryWords.corrections`, `store.pins.list`): those lookups are timed apart,
each turn, and the added work is the difference between all on and all three
off, plus them, taken turn by turn (the settings are built back to back at the
same head) and then the median. The other columns are medians over the turns.
Each figure is given in wall time (what you wait) and in this process's CPU
time (all its threads), which other programs' load inflates less.
"corrections shown" is how many of the 8 the prompt's corrections block holds
(the lookup once read only the newest 200 of your messages with a cue word:
2 of 8 here). A session reads each of your messages for corrections once: its
first turn reads them all (timed alone, the last column), later turns only the
new ones.

The first turn (not kept) also starts making the message vectors of the 10,000
messages in the background (memory/meaning.py); they are made before the turns
that are timed, as in a chat opened again, which reads them back. What making
them costs a first session is chat_speed.py's first turn.

Not covered: the request to a server's /v1/embeddings (when a server has one,
passages are weighed by meaning too; the embedded engine has none), scenes
(each speaker's own reader), memory work (it runs after the reply, not before
it), and the reply itself.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import random
import re
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[1]))

from make_chat import make_chat, sentence  # noqa: E402

from omoide.characters.library import find_character  # noqa: E402
from omoide.chat.session import ChatSession  # noqa: E402
from omoide.chat.tokens import TokenCounter  # noqa: E402
from omoide.config.settings import Settings  # noqa: E402
from omoide.domain.chat import PinSource, Role  # noqa: E402
from omoide.llm.base import Backend  # noqa: E402
from omoide.store import Store  # noqa: E402
from tests.scripted import ScriptedBackend  # noqa: E402

SETTINGS: dict[str, tuple[str, ...]] = {
    "all on": (),
    "passages off": ("passages",),
    "corrections off": ("corrections",),
    "pins off": ("pinned",),
    "all three off": ("passages", "corrections", "pinned"),
}
SYLLABLES = "ka ri mo su ne to ha yu mi ra ko shi ta no ze fu".split()
VOCABULARY = ["".join(parts) for parts in itertools.product(SYLLABLES, repeat=3)]
"""4,096 made-up words, none of them make_chat's."""
ZIPF = list(itertools.accumulate(1 / rank for rank in range(1, len(VOCABULARY) + 1)))
CORRECTIONS = 8
PINS = (
    "Kai is allergic to cats' fur, though not to Biscuit's.",
    "Suzune's grandmother ran the café before her.",
    "Kai's sister Ingrid keeps seventeen beehives.",
    "The lighthouse key hangs behind the café's counter.",
    "Kai's birthday is on the 3rd of March.",
)
CORRECTION_LINE = re.compile(r"^- .*Mochi-(\d+) now, not Biscuit-", re.MULTILINE)
"""A line of the corrections block (a passage has no leading dash)."""
CUE_LINES = ("I am not sure about that.", "Actually, it was late already.", "Not tonight, maybe tomorrow.")


Spent = tuple[float, float]
"""(wall seconds, CPU seconds of this process)."""


def now() -> Spent:
    return time.perf_counter(), time.process_time()


def since(start: Spent) -> Spent:
    wall, cpu = now()
    return wall - start[0], cpu - start[1]


def zipf_words(rng: random.Random, n: int = 3) -> str:
    return " ".join(rng.choices(VOCABULARY, cum_weights=ZIPF, k=n))


def like_a_story(path: Path, chat_id: int, rng: random.Random) -> None:
    """Zipf words in every message, cue words in a sixth of yours, and real corrections."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    rows = conn.execute("SELECT id, role, content FROM messages WHERE chat_id = ? ORDER BY depth", (chat_id,)).fetchall()
    users = [row[0] for row in rows if row[1] == "user"]
    fixes = {users[(k * len(users)) // CORRECTIONS + len(users) // (2 * CORRECTIONS)]: k + 1 for k in range(CORRECTIONS)}
    for message_id, role, content in rows:
        text = f"{content} {zipf_words(rng).capitalize()}."
        if message_id in fixes:
            n = fixes[message_id]
            text += f" Actually my cat is Mochi-{n} now, not Biscuit-{n}."
        elif role == "user" and rng.random() < 1 / 6:
            text += " " + rng.choice(CUE_LINES)
        conn.execute("UPDATE messages SET content = ? WHERE id = ?", (text, message_id))
    conn.execute("COMMIT")
    conn.close()


def counting_backend(estimate: bool) -> Backend:
    if estimate:
        return ScriptedBackend()
    from omoide.llm.local import LocalBackend

    return LocalBackend(Settings())


async def measure(n: int, turns: int, estimate: bool) -> tuple[dict[str, list[Spent]], int]:
    rng = random.Random(5)
    chat_id = await make_chat(n)
    store = await Store.open()
    like_a_story(store.path, chat_id, rng)
    for pin in PINS:
        await store.pins.add("suzune", pin, PinSource.TYPED)
    session = await ChatSession.open(store, find_character("suzune"), Settings(user_name="Kai"), counting_backend(estimate),
                                     chat_id=chat_id, summarizer=ScriptedBackend())
    times: dict[str, list[Spent]] = {name: [] for name in [*SETTINGS, "corrections lookup", "pins lookup"]}
    shown: list[int] = []
    head = (await session.refresh()).head_id
    assert head is not None
    t0 = now()
    await session.turns.story.corrections(head)  # a session's first turn reads all your messages with a cue word, once
    times["corrections, first turn"] = [since(t0)]
    order = list(SETTINGS)
    kept: dict[str, tuple[TokenCounter, str | None]] = {name: (TokenCounter(session.backend), None) for name in SETTINGS}
    try:
        for turn in range(turns + 1):  # the first turn warms the caches (the tokenizer's model load among them) and is not kept
            head = (await session.refresh()).head_id
            assert head is not None
            for role in (Role.ASSISTANT, Role.USER):
                # The Zipf words first: a query takes a message's first 12 content words, and make_chat's
                # (in every message) would fill them, leaving the passages nothing to find by words.
                text = f"{zipf_words(rng).capitalize()}. {sentence(rng, rng.randint(8, 30))}"
                head = (await store.messages.add(chat_id, head, role, text, expected_head=head)).id
            session.accept_head(head)
            await session.refresh()
            for name in order:
                await session.user.set_amnesia(list(SETTINGS[name]))
                # Each setting keeps its own token counts and previous prompt from turn to turn, as a
                # chat that keeps that setting does: no setting counts on another's cached counts.
                session.turns.counter, session.turns._previous_render = kept[name]
                t0 = now()
                prompt = await session.build_prompt(head)
                elapsed = since(t0)
                kept[name] = (session.turns.counter, session.turns._previous_render)
                if turn:
                    times[name].append(elapsed)
                if name == "all on" and turn:
                    shown.append(len(set(CORRECTION_LINE.findall(prompt.rendered()))))
            order = order[1:] + order[:1]  # each setting goes first in turn: the load moves them all alike
            if not turn:  # the vectors the first turn began making in the background: a chat opened again has them
                await session.turns.story.settled()
            t0 = now()
            await session.turns.story.corrections(head)  # what /amnesia corrections leaves running
            fix = since(t0)
            t0 = now()
            await store.pins.list("suzune")  # and /amnesia pinned
            if turn:
                times["corrections lookup"].append(fix)
                times["pins lookup"].append(since(t0))
    finally:
        await session.aclose()
        await store.close()
    return times, int(statistics.median(shown))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000])
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--estimate", action="store_true", help="count tokens at 4 characters a token, not with the tokenizer")
    args = parser.parse_args()
    print(f"ChatSession.build_prompt, median of {args.turns} turns; load average {os.getloadavg()[0]:.1f} at the start")
    print("| messages | all on | passages off | corrections off | pins off | all three off | "
          "corrections lookup | pins lookup | added per turn | corrections shown | corrections, a session's first turn |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for n in args.sizes:
        with tempfile.TemporaryDirectory() as home:
            os.environ["OMOIDE_HOME"] = home
            times, shown = asyncio.run(measure(n, args.turns, args.estimate))
        for kind, pick in (("wall", 0), ("CPU", 1)):
            ms = {name: statistics.median(t[pick] for t in values) * 1000 for name, values in times.items()}
            added = statistics.median(  # turn by turn: the settings were built back to back at the same head
                on[pick] - off[pick] + fix[pick] + pin[pick] for on, off, fix, pin in
                zip(times["all on"], times["all three off"], times["corrections lookup"], times["pins lookup"], strict=True)) * 1000
            cells = " | ".join(f"{ms[name]:.1f} ms" for name in [*SETTINGS, "corrections lookup", "pins lookup"])
            print(f"| {n:,}, {kind} | {cells} | **{added:.1f} ms** | {shown} of {CORRECTIONS} | "
                  f"{ms['corrections, first turn']:.1f} ms |", flush=True)
    print(f"load average {os.getloadavg()[0]:.1f} at the end")
    print("added per turn = all on - all three off + the two lookups /amnesia leaves running, turn by turn (median)")
    print("wall: the time a user waits; CPU: this process's own (all its threads), which others' load inflates less")


if __name__ == "__main__":
    main()
