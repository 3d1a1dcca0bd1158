"""Make memory-check scenarios from seeds (docs/memory-check.md has the format).

    python benchmarks/make_scenarios.py                    # the shipped ones, into src/omoide/check/scenarios/
    python benchmarks/make_scenarios.py --family weeks --seed 7 --out /tmp/weeks-7.json

Each seed draws other names, values, days and padding, so the same story shape
is asked with other words: a design tuned to one seed's words shows its spread
on the others. Families:

- evenings: ~150 messages over a week, dense: every day plants several facts;
- weeks: ~370 messages over two weeks;
- months: ~2,100 messages over a month, padding lines of 60-80 words (on the
  order of LongMemEval's 100k-token histories).

Every family plants every category of the check: single facts, facts said
indirectly, facts the character says herself, preferences, knowledge updates
(a move, and a correction "actually ..., not ..."), two-fact questions, time
(what happened N days ago, which came first when one event was told days later
with a relative phrase), abstention, the knowledge boundary with Wren coming and
going (and who told her), a branch abandoned and its fact that must not be
known, a swiped-away reply and an edited message that must not leak, a pinned
fact, and what carries over to a new chat. Questions never repeat the fact's
value and avoid its words; distractors (a neighbour's cat, a colleague's city)
stand in the padding.
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path
from typing import Any

SHIPPED = Path(__file__).parents[1] / "src" / "omoide" / "check" / "scenarios"
FAMILIES = {  # name: (days, padding turns a day, words per padding line)
    "evenings": (6, 2, (8, 16)),
    "weeks": (12, 10, (12, 24)),
    "months": (30, 32, (60, 80)),
}
SHIP = (("evenings", 1), ("evenings", 2), ("evenings", 3), ("weeks", 1), ("weeks", 2), ("months", 1))

CATS = ["Biscuit", "Pickle", "Waffle", "Juniper", "Tofu", "Marlowe", "Pudding", "Clementine", "Nutmeg", "Figaro"]
BIKES = ["Comet", "Thunderbolt", "Swallow", "Rocket", "Drifter", "Kestrel", "Zephyr"]
CITIES = ["London", "Berlin", "Lisbon", "Oslo", "Vienna", "Dublin", "Prague", "Madrid", "Zurich", "Krakow"]
GIFTS = ["yuzu marmalade", "fig jam", "chestnut honey", "plum wine", "ginger biscuits", "quince paste"]
SISTERS = [("Ana", "Ines"), ("Mara", "Lena"), ("Rosa", "Tilda"), ("Vera", "Nadia"), ("Elsa", "Greta")]
HOMETOWNS = ["Otaru", "Hakodate", "Kanazawa", "Matsue", "Onomichi", "Kurashiki"]
HERBS = ["coriander", "dill", "fennel", "tarragon", "lovage"]
TEAS = ["jasmine", "rooibos", "hojicha", "chamomile", "oolong"]
JOBS = [("teaching piano at the conservatory", "piano"), ("restoring violins in a workshop", "violin"),
        ("drawing maps for the harbour office", "maps"), ("translating Finnish crime novels", "finnish")]
PEAKS = ["Ben Nevis", "Snowdon", "Mont Ventoux", "Triglav", "Olympus"]
FRIENDS = ["Dario", "Yusuf", "Marta", "Soren", "Ilse", "Tomasz"]
FRIEND_CITIES = ["Porto", "Ghent", "Bergen", "Trieste", "Tartu", "Cork"]
ACTIVITIES = [  # (what we did together, its evidence word, how a question names it)
    ("went to the aquarium on the pier", "aquarium", "our aquarium visit"),
    ("baked rye bread in your kitchen", "rye", "the day we baked rye bread"),
    ("flew kites on the dunes", "kites", "the day of the kites"), ("repainted your porch sky blue", "porch", "the porch painting"),
    ("went to the botanical garden", "botanical", "our botanical garden visit"),
    ("played chess by the harbour", "chess", "our chess game by the harbour"),
    ("made dumplings from scratch", "dumplings", "our dumpling making"),
    ("went stargazing on the cliffs", "stargazing", "our stargazing night"),
]
RACES = [("ran my first half marathon", "marathon"), ("did the hundred-kilometre charity ride", "ride"),
         ("sang a solo at the harbour choir's concert", "concert")]
SECRETS = ["Reykjavik", "Tromso", "Hobart", "Ushuaia", "Longyearbyen"]
SURPRISES = ["Kyoto", "Marrakesh", "Valparaiso", "Tbilisi"]
BRANCHED = [("tortoise", "Sheldon"), ("parrot", "Captain"), ("ferret", "Noodle")]
GRANDMAS = ["Isolde", "Ottilie", "Henrietta", "Cordelia"]
COLOURS = [("green", "orange"), ("grey", "yellow"), ("purple", "teal")]
ALLERGIES = ["peanuts", "shellfish", "sesame", "kiwi"]
PET_SPECIES_OTHER = ["dog", "hamster", "goldfish"]
RELATIVES_OTHER = ["brother", "uncle", "cousin"]

TOWNS = ["Hollow Bay", "Marsh End", "Gullhaven", "Saltcombe", "Ferrow", "Oakmere", "Lindby", "Carrow Point"]
PEOPLE = ["Mr. Abbott", "Hana", "Olek", "Priya", "the postman", "my landlady", "Theo", "Beatrix"]
THINGS = ["umbrella", "teapot", "radio", "bookshelf", "kettle", "lamp", "scarf", "notebook", "clock", "bench"]
FILLER = [
    "The {n}:{m:02d} train from {town} was late again because of fog on the line.",
    "{person} says the market in {town} sells the best oranges on Saturdays.",
    "I finally fixed the {thing}; it only took {n} tries and a lot of patience.",
    "It rained for {n} hours straight, and the gutters by the station overflowed.",
    "I read {n} chapters of a detective novel set in {town} on the way home.",
    "{person} lent me a {thing} and told me to bring it back by Friday.",
    "The gulls at the harbour were fighting over a sandwich for {n} minutes.",
    "There is a new bakery near the station in {town}, but it closes at {n}.",
    "I walked past the old cinema; they are painting it green this week.",
    "The lighthouse blinked all night and I counted {n} seconds between flashes.",
    "My shoes are still wet from the walk along the sea wall in {town}.",
    "I found an old postcard from {town} inside a second-hand book.",
    "The bus driver hummed the same song for {n} stops in a row.",
    "{person} painted the fence by the allotments a colour nobody can name.",
    "I keep forgetting to buy batteries for the {thing} in the hallway.",
    "The harbour smelled of tar and salt all afternoon.",
]


def _filler(rng: random.Random, words: tuple[int, int]) -> str:
    target = rng.randint(*words)
    parts: list[str] = []
    while sum(len(p.split()) for p in parts) < target:
        parts.append(rng.choice(FILLER).format(n=rng.randint(2, 11), m=rng.randint(0, 59), town=rng.choice(TOWNS),
                                               person=rng.choice(PEOPLE), thing=rng.choice(THINGS)))
    return " ".join(parts)


def make(family: str, seed: int) -> dict[str, Any]:
    days, pad, words = FAMILIES[family]
    rng = random.Random(f"{family}-{seed}")
    pick = rng.sample
    cat, neighbour_cat = pick(CATS, 2)
    bike = rng.choice(BIKES)
    old_city, new_city, colleague_city = pick(CITIES, 3)
    gift = rng.choice(GIFTS)
    sister_wrong, sister = rng.choice(SISTERS)
    hometown = rng.choice(HOMETOWNS)
    herb, tea = rng.choice(HERBS), rng.choice(TEAS)
    job, job_word = rng.choice(JOBS)
    peak = rng.choice(PEAKS)
    friend, other_friend = pick(FRIENDS, 2)
    friend_city, other_city = pick(FRIEND_CITIES, 2)
    acts = pick(ACTIVITIES, 4)
    race, race_word = rng.choice(RACES)
    secret, surprise = rng.choice(SECRETS), rng.choice(SURPRISES)
    species, pet = rng.choice(BRANCHED)
    grandma = rng.choice(GRANDMAS)
    colour_old, colour_new = rng.choice(COLOURS)
    allergy = rng.choice(ALLERGIES)
    no_pet, no_relative = rng.choice(PET_SPECIES_OTHER), rng.choice(RELATIVES_OTHER)

    # Which day each part happens on, spread over the story (day 1 .. days).
    def day(fraction: float) -> int:
        return max(1, min(days, 1 + round(fraction * (days - 1))))

    act_days = sorted({day(f) for f in (0.0, 0.3, 0.6, 1.0)})
    while len(act_days) < 4:
        act_days.append(act_days[-1] + 1)
    ask_day = days + 2
    race_told = act_days[2]
    race_day = race_told - 3 if race_told > 3 else race_told  # told "three days ago"
    facts: list[dict[str, Any]] = [
        {"id": "cat", "evidence": [[cat], ["cat"]]},
        {"id": "bike", "evidence": [[bike], ["bicycle", "bike"]]},
        {"id": "gift", "evidence": [[gift.split()[-1]], ["promise", "bring"]]},
        {"id": "job", "evidence": [[job_word], ["teach", "restor", "draw", "translat", "work"]]},
        {"id": "peak", "evidence": [[peak.split()[-1]], ["climb"]]},
        {"id": "hometown", "evidence": [[hometown], ["grew up"]]},
        {"id": "herb", "evidence": [[herb], ["stand", "hate", "soap"]]},
        {"id": "tea", "evidence": [[tea], ["tea"]]},
        {"id": "home_old", "evidence": [[old_city], ["live", "flat"]]},
        {"id": "home_new", "evidence": [[new_city], ["moved", "live", "flat"]], "supersedes": "home_old"},
        {"id": "sister_old", "evidence": [[sister_wrong], ["sister"]]},
        {"id": "sister_new", "evidence": [[sister], ["sister"]], "supersedes": "sister_old"},
        {"id": "friend_city", "evidence": [[friend], [friend_city]]},
        {"id": "wedding", "evidence": [[friend_city], ["wedding", "married"]]},
        *({"id": f"act{i}", "evidence": [[word]], "event": True} for i, (_, word, _) in enumerate(acts)),
        {"id": "race", "evidence": [[race_word]], "event": True, "relative": "three days ago",
         "days_before": race_told - race_day},
        {"id": "secret", "evidence": [[secret]]},
        {"id": "allergy", "evidence": [[allergy], ["allergic"]]},
        {"id": "colour_new", "evidence": [[colour_new], ["colour", "color"]]},
    ]
    plants: dict[int, list[dict[str, Any]]] = {d: [] for d in range(1, days + 1)}

    def plant(d: int, event: dict[str, Any]) -> None:
        plants[d].append(event)

    plant(1, {"pin": f"Kai is allergic to {allergy}."})
    plant(day(0.0), {"user": f"By the way, my cat is called {cat}. He sleeps on the radiator all day.", "fact": "cat"})
    plant(day(0.0), {"user": f"I live in {old_city} these days, in a flat near the river.", "fact": "home_old"})
    plant(day(0.1), {"user": f"My sister is called {sister_wrong}, she's the loud one in the family.", "fact": "sister_old"})
    plant(day(0.15), {"user": f"My neighbour's cat, {neighbour_cat}, sat on my windowsill again."})
    plant(day(0.2), {"user": f"I finally named my bicycle. It's called {bike}, because it's fast and a bit reckless.",
                     "fact": "bike"})
    plant(day(0.25), {"user": f"Sorry I'm tired, work has been busy since I started {job}.", "fact": "job"})
    plant(day(0.3), {"user": "Tell me where you're from, Suzune.",
                     "reply": f"*She shrugs.* I grew up in {hometown}, by the canal. Don't make a thing of it.",
                     "fact": "hometown"})
    plant(day(0.35), {"user": f"I promise I'll bring you a jar of {gift} next week.", "fact": "gift"})
    plant(day(0.4), {"user": f"I can't stand {herb}, it tastes like soap to me.", "fact": "herb"})
    plant(day(0.45), {"user": f"My oldest friend {friend} lives in {friend_city} now.", "fact": "friend_city"})
    plant(day(0.5), {"user": f"My knees still ache from the climb up {peak} on Saturday.", "fact": "peak"})
    plant(day(0.55), {"user": f"A colleague of mine, {other_friend}, just moved to {colleague_city}."})
    plant(day(0.6), {"user": f"Actually, I misspoke the other day: my sister's name is {sister}, not {sister_wrong}.",
                     "fact": "sister_new"})
    plant(day(0.65), {"user": f"I could drink {tea} tea all day, honestly.", "fact": "tea"})
    plant(day(0.7), {"user": f"Big news: I moved to {new_city} last weekend. The flat has a balcony over a canal.",
                     "fact": "home_new"})
    plant(day(0.75), {"user": f"Guess what, the friend in {friend_city} is getting married in June!", "fact": "wedding"})
    plant(race_told, {"user": f"Three days ago I {race}, and I'm still proud of it.", "fact": "race"})
    for i, ((what, _, _), d) in enumerate(zip(acts, act_days)):
        plant(min(d, days), {"user": f"Today we {what} together. That was a good day.", "fact": f"act{i}"})
    plant(day(0.8), {"user": f"Suzune, a secret just between us: I applied for the observatory job in {secret}.",
                     "fact": "secret"})
    # The branch that is abandoned, the swipe and the edit.
    branch = [
        {"branch_save": "before-pet"},
        {"user": f"I adopted a {species} today! I named him {pet}."},
        {"pad": 3},
        {"branch_restore": "before-pet"},
        {"user": "Tell me about your grandmother."},
        {"swipe": f"*She smiles.* My grandmother was an opera singer called {grandma}."},
        {"user": f"My favourite colour is {colour_old}, you know."},
        {"edit": f"My favourite colour is {colour_new}, you know."},
    ]
    plant(day(0.85), {"marker": "branch"})

    events: list[dict[str, Any]] = []
    for d in range(1, days + 1):
        events.append({"day": d})
        for e in plants[d]:
            if e.get("marker") == "branch":
                events.extend(branch)
                continue
            events.append(e)
        events.append({"pad": pad})
    events.append({"day": ask_day})
    host_questions = [
        q("cat", "single", "What's the name of my pet?", cat, needs=["cat"], distractors=[neighbour_cat]),
        q("bike", "single", "What did I call my bike?", bike, needs=["bike"]),
        q("gift", "single", "What am I supposed to bring you?", gift.split()[-1], needs=["gift"], truth=f"a jar of {gift}"),
        q("job", "indirect", "What do I do for a living?", job_word, needs=["job"], truth=job),
        q("peak", "indirect", "Which mountain did I go up recently?", peak.split()[-1].casefold(), needs=["peak"]),
        q("hometown", "self", "Which town are you from, originally?", hometown, needs=["hometown"]),
        q("herb", "preference", "Which herb should you keep out of my food?", herb, needs=["herb"]),
        q("tea", "preference", "What should you brew for me when I come in?", tea, needs=["tea"]),
        q("home", "update", "Which city am I living in now?", new_city, needs=["home_new"], stale=[old_city],
          distractors=[colleague_city]),
        q("sister", "update", "What's my sister's name?", sister, needs=["sister_new"], stale=[sister_wrong]),
        q("wedding", "multihop", "Which of my friends has a wedding coming up?", friend,
          needs=["friend_city", "wedding"], distractors=[other_friend]),
        q("days_ago", "temporal", f"What did we do together {ask_day - act_days[1]} days ago?", acts[1][1],
          days_ago=ask_day - act_days[1], needs=["act1"], distractors=[a[1] for a in acts if a != acts[1]]),
        q("order", "temporal", f"Which came first: my {race_word} or {acts[1][2]}?",
          race_word if race_day < act_days[1] else acts[1][1],
          order=["race", "act1"] if race_day < act_days[1] else ["act1", "race"],
          distractors=[acts[1][1]] if race_day < act_days[1] else [race_word]),
        q("dog", "abstention", f"What's my {no_pet} called?", None, abstain=True),
        q("relative", "abstention", f"What does my {no_relative} do for work?", None, abstain=True),
        q("allergy", "pinned", "Is there any food you must never serve me?", allergy, needs=["allergy"]),
        q("branch", "point_in_time", "Have I got any new animals at home lately?", None, refuse=[pet.casefold(), species]),
        q("swipe", "hygiene", "What was your grandmother's name?", None, refuse=[grandma.casefold()]),
        q("colour", "hygiene", "Which colour do I like best?", colour_new, needs=["colour_new"], stale=[colour_old]),
    ]
    events.extend({"ask": x["id"]} for x in host_questions)
    boundary = [
        q("own_chat", "boundary", "Wren, do you know where I applied for a job?", None, refuse=[secret.casefold(), "observatory"],
          speaker="wren"),
        q("invited", "boundary", "Wren, have you heard where I applied for a job?", None,
          refuse=[secret.casefold(), "observatory"], speaker="wren"),
        q("told", "boundary", "Wren, where did I apply for a job, and who told you?", secret, also=[["suzune"]],
          needs=["secret"], speaker="wren", truth=f"{secret} (the observatory), told by Suzune"),
        q("away", "boundary", "Wren, do you know what trip I'm planning?", None, refuse=[surprise.casefold()], speaker="wren"),
    ]
    events += [
        {"chat": "wren"}, {"user": "Good evening, Wren."}, {"ask": "own_chat"}, {"chat": "host"},
        {"invite": "wren"}, {"ask": "invited"},
        {"user": "Suzune, you can tell Wren about my job application.",
         "reply": f"Wren, Kai told me something: he applied for the observatory job in {secret}. Keep it to yourself.",
         "speaker": "suzune"},
        {"pad": max(4, pad // 2)}, {"ask": "told"},
        {"leave": "wren"},
        {"user": f"Suzune, while Wren is out: I'm planning a surprise trip to {surprise} for her.", "speaker": "suzune"},
        {"pad": 2}, {"invite": "wren"}, {"ask": "away"},
    ]
    carried = [q("new_cat", "new_chat", "Do you remember what my pet is called?", cat, needs=["cat"],
                 distractors=[neighbour_cat]),
               q("new_home", "new_chat", "Remind me, which city do I live in?", new_city, needs=["home_new"],
                 stale=[old_city])]
    events += [{"chat": "new"}, {"user": "Hello again, it's been a while."}, *({"ask": x["id"]} for x in carried)]
    padding = [_filler(rng, words) for _ in range(max(40, days * pad + 20))]
    return {
        "format": 1, "name": f"{family}-{seed}", "family": family, "seed": seed,
        "about": f"Kai and Suzune over {days} days ({family}); made by benchmarks/make_scenarios.py",
        "user": "Kai", "host": "suzune", "guests": ["wren"], "start": "2026-03-02T19:00",
        "facts": facts, "questions": [*host_questions, *boundary, *carried], "events": events, "padding": padding,
    }


def q(qid: str, category: str, ask: str, answer: str | None, *, needs: list[str] | None = None, **more: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"id": qid, "category": category, "ask": ask}
    if answer is not None:
        out["answer"] = [answer.casefold()]
    if needs:
        out["needs"] = needs
    for key, value in more.items():
        if key in ("stale", "distractors", "refuse") and isinstance(value, list):
            value = [v.casefold() for v in value]
        out[key] = value
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--family", choices=sorted(FAMILIES))
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, help="write one scenario here (with --family)")
    args = parser.parse_args()
    if args.family:
        data = make(args.family, args.seed)
        out = args.out or Path(f"{args.family}-{args.seed}.json")
        out.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        print(f"{out}: {sum(1 for e in data['events'] if 'ask' in e)} questions")
        return
    SHIPPED.mkdir(parents=True, exist_ok=True)
    for old in SHIPPED.glob("*.json"):
        old.unlink()
    for family, seed in SHIP:
        data = make(family, seed)
        path = SHIPPED / f"{family}-{seed}.json"
        path.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        print(path)


if __name__ == "__main__":
    main()
