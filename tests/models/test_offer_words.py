"""The speed an offer promises, in words a reader can take at face value: "about
1 token a second", never "about 1 tokens"; "under 1 token" rather than "about 0"."""

from __future__ import annotations

import pytest

from omoide.models.catalog import RECOMMENDED
from omoide.models.offer import Machine, Offer


def offer(speed: float) -> Offer:
    return Offer(RECOMMENDED[0], 1, 1, speed, Machine(cores=1, memory=None))


@pytest.mark.parametrize(("speed", "said", "words"), [
    (5.2, "about 5 tokens a second", "roughly 4 words"),
    (1.2, "about 1 token a second", "roughly 1 word;"),
    (0.3, "under 1 token a second", "under 1 word;"),
])
def test_the_offer_says_its_speed_in_words_that_agree(speed: float, said: str, words: str) -> None:
    described = offer(speed).describe()[-1]
    assert f"Expect {said} here" in described and words in described and "1 CPU core)" in described, described


def test_models_says_the_speed_per_second_the_same_way() -> None:
    assert (offer(1.2).pace(), offer(0.3).pace(), offer(7.6).pace()) == ("about 1 token/s", "under 1 token/s", "about 8 tokens/s")
