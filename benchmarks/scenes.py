"""What a group scene costs the client, and how much of each prompt a cache can reuse.

    python benchmarks/scenes.py [--turns 120]
    python benchmarks/scenes.py --engine [--turns 16] [--slots 3] [--verbose] [--cast 2|3] [--full-third]   # the real embedded engine

For a one-on-one chat, a scene of two and a scene of three (a scripted,
instant backend; real SQLite in a temp directory):
- client time per turn (your message stored, speaker chosen, prompt built and
  counted, reply stored), median and p95;
- the share of each prompt that is a common prefix with the previous prompt
  (what a single-slot cache such as llama.cpp's reuses) and with the same
  speaker's previous prompt (what a cache per speaker could reuse).
Then the cost of one speaker choice (the pure function).

With --engine the replies come from the embedded engine (SmolLM2-135M, replies
of 24 tokens, memory work on the same engine) and the figure is the engine's
own: per reply, prompt tokens it took from its cache (`timings.cache_n`) /
tokens in the prompt, token-weighted over the turns after each speaker's
first; with --slots 1 every speaker shares one slot, as before this engine.
--verbose prints each turn: the speaker, prompt tokens, cached and evaluated
tokens, what llama.cpp's cache reuse would take from the speaker's slot
(`reused`, its algorithm replayed on the token ids: it agrees with the engine
to one token), where the prompt first differs from the slot and where reuse
ends; then the evaluated tokens of turns whose memory (the text before the
script) changed, against the others. --set changes a setting (a number or a word).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))


def _p95(values: list[float]) -> float:
    return sorted(values)[int(len(values) * 0.95) - 1]


def reused(cache: list[int], prompt: list[int], chunk: int = 32) -> tuple[int, list[tuple[int, int, int]]]:
    """Tokens llama.cpp's server takes from a slot holding `cache` for `prompt`
    (its longest common prefix, then with --cache-reuse `chunk`: runs of at
    least `chunk` tokens the slot holds further on, shifted into place; the
    prompt's tokens are never skipped), as its update_slots does it."""
    n = 0
    while n < min(len(cache), len(prompt)) and cache[n] == prompt[n]:
        n += 1
    head_c = head_p = n
    runs = [(0, 0, n)]
    while head_c < len(cache) and head_p < len(prompt):
        match = 0
        while head_c + match < len(cache) and head_p + match < len(prompt) and cache[head_c + match] == prompt[head_p + match]:
            match += 1
        if match >= chunk:
            runs.append((head_c, head_p, match))
            head_c += match
            head_p += match
        else:
            head_c += 1
    return head_p, runs


class _Trace:
    """Per speaker: the tokens its slot holds (its last prompt and what the engine generated after it)."""

    def __init__(self, backend: object) -> None:
        self.backend = backend
        self.engine = backend.engine()  # type: ignore[attr-defined]
        self.slot: dict[str, list[int]] = {}
        self.generated = ""
        self.head_changed = False
        self.split = {True: [0, 0], False: [0, 0]}
        """head changed or not -> [evaluated, prompt] over the counted turns"""
        complete = self.engine.complete

        def recording(body: dict, on_chunk):  # type: ignore[no-untyped-def]
            self.generated = ""

            def relay(chunk: dict) -> bool:  # type: ignore[type-arg]
                for choice in chunk.get("choices") or []:
                    self.generated += choice.get("text") or ""
                return bool(on_chunk(chunk))

            self.last_body = body
            return complete(body, relay)

        self.engine.complete = recording

    def text(self, ids: list[int]) -> str:
        return repr(self.engine.post("/detokenize", {"tokens": ids}).get("content", ""))[:100]

    def turn(self, speaker: str, messages: list) -> str:  # type: ignore[type-arg]
        """Where the prompt first differs from what the speaker's slot holds, and what llama.cpp would reuse."""
        tokens: list[int] = self.backend.tokenize(self.backend.render_prompt(messages))  # type: ignore[attr-defined]
        before = self.slot.get(speaker)
        self.slot[speaker] = tokens + self.engine.tokenize(self.generated)
        if before is None:
            return "first"
        i = 0
        while i < min(len(before), len(tokens)) and before[i] == tokens[i]:
            i += 1
        n, runs = reused(before, tokens)
        opening = self.backend.render_prompt(messages).find("The scene so far")  # type: ignore[attr-defined]
        head = len(self.backend.tokenize(self.backend.render_prompt(messages)[:opening])) if opening > 0 else 0  # type: ignore[attr-defined]
        self.head_changed = i < head
        c, q, m = runs[-1]
        end = (f"      reuse ends at prompt {q + m} (slot {c + m}/{len(before)}): slot has {self.text(before[c + m:c + m + 10])} "
               f"prompt has {self.text(tokens[q + m:q + m + 10])} after {self.text(tokens[max(q + m - 8, 0):q + m])}\n")
        return (f"sim {n:>5} in {len(runs)} runs at {i}/{len(before)}: was {self.text(before[i:i + 12])} "
                f"now {self.text(tokens[i:i + 12])} (after {self.text(tokens[max(i - 6, 0):i])})\n"
                + end + f"      generated {self.generated[-60:]!r}")


async def run(cast: list[str], turns: int, home: Path, engine_slots: int = 0,
              verbose: bool = False, overrides: dict[str, object] | None = None) -> tuple[list[float], list[float], list[float]]:
    from omoide.characters.library import find_character
    from omoide.config.settings import Settings
    from omoide.memory.prompt.fit import shared_prefix_chars
    from omoide.chat.session import ChatSession
    from omoide.store import Store
    from tests.scripted import ScriptedBackend

    settings = Settings(user_name="Kai", scene_seed=1, gossip_rate=0.0, world_idle_hours=0)
    backend: object = ScriptedBackend(default=lambda messages: ["*nods* A short reply, with a detail or two to remember."])
    if engine_slots:
        from omoide.llm.local import LocalBackend

        settings = Settings(user_name="Kai", scene_seed=1, gossip_rate=0.0, world_idle_hours=0, max_tokens=24,
                            temperature=0.7, seed=3, context_size=4096, engine_slots=engine_slots, **(overrides or {}))
        backend = LocalBackend(settings)
    cached: list[tuple[int, int]] = []
    seen: set[str] = set()
    store = await Store.open(home / f"{'-'.join(cast)}.db")
    session = await ChatSession.open(store, find_character(cast[0]), settings, backend,
                                     others=[find_character(c) for c in cast[1:]])
    times: list[float] = []
    previous_any: str | None = None
    previous_own: dict[str, str] = {}
    trace = _Trace(backend) if verbose and engine_slots else None
    shared_any: list[float] = []
    shared_own: list[float] = []
    rng = random.Random(2)
    for i in range(turns):
        text = f"Line {i}: {rng.choice(['tea', 'maps', 'the tide', 'a letter'])}, what do you think?"
        start = time.perf_counter()
        async for _ in session.send(text):
            pass
        times.append((time.perf_counter() - start) * 1000)
        prompt = session.last_prompt
        assert prompt is not None
        rendered = prompt.rendered()
        speaker = prompt.speaker.split(":")[0] or cast[0]
        usage = prompt.usage
        if engine_slots and usage is not None and usage.prompt_tokens and speaker in seen:
            cached.append((usage.cache_read_tokens or 0, usage.prompt_tokens))
        if trace is not None and usage is not None:
            where = trace.turn(speaker, prompt.messages)
            if speaker in seen:
                trace.split[trace.head_changed][0] += (usage.prompt_tokens or 0) - (usage.cache_read_tokens or 0)
                trace.split[trace.head_changed][1] += usage.prompt_tokens or 0
            print(f"  turn {i:>3} {speaker:<7} prompt {usage.prompt_tokens:>5} cached {usage.cache_read_tokens or 0:>5} "
                  f"evaluated {(usage.prompt_tokens or 0) - (usage.cache_read_tokens or 0):>4}  differs {where}", flush=True)
        seen.add(speaker)
        if previous_any is not None:
            shared_any.append(shared_prefix_chars(previous_any, rendered) / len(rendered))
        if speaker in previous_own:
            shared_own.append(shared_prefix_chars(previous_own[speaker], rendered) / len(rendered))
        previous_any, previous_own[speaker] = rendered, rendered
        await session.memory_worker.wait()
    await session.aclose()
    await store.close()
    if trace is not None:
        for changed, (evaluated, total) in trace.split.items():
            print(f"  turns where the memory before the script {'changed' if changed else 'stayed'}: "
                  f"{evaluated} of {total} prompt tokens evaluated")
    if engine_slots:  # the engine's own counts replace the client's character figures
        weighted = sum(c for c, _ in cached) / max(sum(t for _, t in cached), 1)
        shared_own = [weighted]
    return times, shared_any, shared_own


def choice_cost(draws: int) -> float:
    from omoide.scene.speakers import Candidate, choose

    cands = [Candidate("a", "Ann"), Candidate("b", "Bo"), Candidate("c", "Cy")]
    rng = random.Random(1)
    start = time.perf_counter()
    for i in range(draws):
        choose(cands, rng=rng, text="and then we walked home", previous="c", familiarity={"a": 0.3, "b": 0.6},
               turns_since={"a": i % 4, "b": 2})
    return (time.perf_counter() - start) / draws * 1e6


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=120)
    parser.add_argument("--engine", action="store_true", help="replies from the real embedded engine")
    parser.add_argument("--slots", type=int, default=3, help="with --engine: cache slots (1: one shared slot)")
    parser.add_argument("--verbose", action="store_true", help="with --engine: each turn's counts, and where its prompt "
                        "first differs from the same speaker's previous one")
    parser.add_argument("--cast", type=int, choices=(2, 3), help="with --engine: only the scene of this many")
    parser.add_argument("--full-third", action="store_true",
                        help="with --engine: the third character's card about as long as the shipped two's, not one line")
    parser.add_argument("--set", action="append", default=[], metavar="SETTING=VALUE",
                        help="with --engine: a setting to change, e.g. --set summary_threshold=26 or --set summary_placement=head")
    args = parser.parse_args()
    if args.engine:
        overrides: dict[str, object] = {k: int(v) if v.isdigit() else v for k, v in (item.split("=", 1) for item in args.set)}
        return engine_main(args.turns, args.slots, args.verbose, args.cast, overrides, args.full_third)
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        third_character(home)
        print(f"{args.turns} turns each; load average {os.getloadavg()[0]:.1f}")
        print(f"{'chat':<22} {'median ms':>10} {'p95 ms':>8} {'prefix vs previous':>19} {'vs same speaker':>16}")
        for cast in (["suzune"], ["suzune", "wren"], ["suzune", "wren", "mika"]):
            times, shared_any, shared_own = asyncio.run(run(cast, args.turns, home))
            label = "one-on-one" if len(cast) == 1 else f"scene of {len(cast)}"
            print(f"{label:<22} {statistics.median(times):>10.1f} {_p95(times):>8.1f} "
                  f"{statistics.mean(shared_any):>18.1%} {statistics.mean(shared_own) if shared_own else 0:>15.1%}")
    print(f"one speaker choice (3 present): {choice_cost(20000):.1f} µs")


FULL_MIKA = """name = "Mika"
description = '''
{{char}} Sato, 41, has carried the post along the harbour road for twenty years.
She knows every letterbox, every dog and every rumour between the station and
the lighthouse, and pretends to know none of them. A red bicycle with a
squeaking wheel, a waxed jacket, a satchel that is never quite closed.
'''
personality = '''
Cheerful, nosy, loyal. Talks fast and changes the subject when she has said too
much. Remembers birthdays. Cannot keep a secret for long, but never tells one
that would hurt anybody.
'''
scenario = '''
The end of {{char}}'s round: the café by the last station, rain on the windows,
a parcel for someone who has not come to collect it.
'''
example_dialogue = '''
<START>
{{user}}: Any post for me?
{{char}}: *She rummages in the satchel far longer than she needs to.* A postcard.
I didn't read it. *A pause.* Your aunt says the weather in Kobe is lovely.
<START>
{{user}}: Do you ever get tired of the same road?
{{char}}: *She laughs and shakes the rain off her hood.* Same road, different
weather, different people. Yesterday a gull stole a letter right out of my hand.
'''
"""


def third_character(home: Path, full: bool = False) -> None:
    """A throw-away OMOIDE_HOME under `home` with a third character, Mika, beside
    the shipped two: a one-line card, or (`full`) one about as long as theirs."""
    os.environ["OMOIDE_HOME"] = str(home / "home")
    extra = home / "home" / "data" / "characters" / "mika"
    extra.mkdir(parents=True)
    card = FULL_MIKA if full else 'name = "Mika"\ndescription = "A postman who knows everyone."\n'
    (extra / "character.toml").write_text(card)


def engine_main(turns: int, slots: int, verbose: bool = False, only: int | None = None,
                overrides: dict[str, object] | None = None, full_third: bool = False) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        third_character(home, full_third)
        changed = "".join(f", {k} = {v}" for k, v in (overrides or {}).items())
        print(f"embedded engine, SmolLM2-135M, {slots} slot(s), {turns} turns each{changed}; load average {os.getloadavg()[0]:.1f}")
        print(f"{'chat':<14} {'cached / prompt tokens (engine, token-weighted)':>48}")
        for cast in (["suzune", "wren"], ["suzune", "wren", "mika"]):
            if only and len(cast) != only:
                continue
            _, _, weighted = asyncio.run(run(cast, turns, home, engine_slots=slots, verbose=verbose, overrides=overrides))
            print(f"{'scene of ' + str(len(cast)):<14} {weighted[0]:>48.1%}", flush=True)
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
