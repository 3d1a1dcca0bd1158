"""Who speaks next: the pure choice, with a seeded random source."""

from __future__ import annotations

import random
from collections import Counter

from omoide.scene.speakers import Candidate, addressed, choose, gossip_target, turns_since, weight

SUZUNE, WREN, MIKA = Candidate("suzune", "Suzune", ("Suzu",)), Candidate("wren", "Wren"), Candidate("mika", "Mika")


def test_a_named_addressee_answers_first_even_against_the_odds() -> None:
    rng = random.Random(1)
    for _ in range(50):
        pick = choose([SUZUNE, WREN], rng=rng, text="So, wren, what do you think?", previous="user:Kai",
                      familiarity={"suzune": 0.99, "wren": 0.0}, turns_since={"suzune": 9})
        assert pick.key == "wren" and "named" in pick.reason
    assert addressed("Suzu! And Wren.", [WREN, SUZUNE]) == SUZUNE  # the earliest name, nicknames too
    assert addressed("Wrenfield is a town", [WREN]) is None  # whole words only


def test_familiarity_weighting_holds_over_many_draws() -> None:
    rng = random.Random(12)
    draws = Counter(
        choose([SUZUNE, WREN], rng=rng, previous="mika", familiarity={"suzune": 0.6, "wren": 0.0},
               turns_since={"suzune": 3, "wren": 3}).key
        for _ in range(4000)
    )
    expected = weight(0.6, 3) / (weight(0.6, 3) + weight(0.0, 3))  # (1 + 3*0.6) / (1 + 2.8 + 1) = 0.737
    assert abs(draws["suzune"] / 4000 - expected) < 0.03
    assert draws["suzune"] > draws["wren"] * 2


def test_familiarity_has_diminishing_returns_and_a_bound() -> None:
    gains = [weight(f, 2) - weight(f - 0.25, 2) for f in (0.25, 0.5, 0.75, 1.0)]
    assert all(g > 0 for g in gains)
    assert weight(5.0, 2) == weight(1.0, 2)  # never beyond the bound


def test_the_quiet_one_is_likelier_and_the_last_speaker_does_not_answer_itself() -> None:
    rng = random.Random(3)
    draws = Counter(
        choose([SUZUNE, WREN, MIKA], rng=rng, previous="mika", turns_since={"mika": 1, "suzune": 2, "wren": 6}).key
        for _ in range(3000)
    )
    assert draws["mika"] == 0
    assert draws["wren"] > draws["suzune"] * 1.3
    assert turns_since(["a", "b", "a", "c"]) == {"c": 1, "a": 2, "b": 3}


def test_the_reason_names_every_weight() -> None:
    pick = choose([SUZUNE, WREN], rng=random.Random(0), previous="user:Kai", previous_name="Kai",
                  familiarity={"suzune": 0.28}, turns_since={"suzune": 2})
    assert "drawn at random" in pick.reason and "familiarity with Kai 0.28" in pick.reason and "not yet spoken" in pick.reason


def test_gossip_target_rate() -> None:
    rng = random.Random(5)
    assert all(gossip_target(lambda: [MIKA], 1.0, rng) == MIKA for _ in range(100))
    assert all(gossip_target(lambda: [MIKA], 0.0, rng) is None for _ in range(100))
    assert gossip_target(lambda: [], 1.0, rng) is None


def test_the_absent_are_listed_only_when_a_target_is_drawn() -> None:
    """A library can hold thousands: naming them all is left until a draw needs them."""
    asked: list[int] = []

    def absent() -> list[Candidate]:
        asked.append(1)
        return [MIKA]

    rng = random.Random(5)
    drawn = [gossip_target(absent, 0.3, rng) for _ in range(200)]
    assert len(asked) == sum(1 for d in drawn if d is not None) and 20 < len(asked) < 120
