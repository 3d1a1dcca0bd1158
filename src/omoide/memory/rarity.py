"""How rare each word is in the story: what the extractive writer weighs a
sentence by (memory/extract.py), read from the full-text index, so a word said
once in a thousand messages counts for more than one said every evening, in
any wording and for every speaker."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import TYPE_CHECKING

from omoide.memory.extract import Rarity, content_words

if TYPE_CHECKING:
    from omoide.store import Store

MAX_WORDS = 2000
"""The most words looked up for one piece of memory work (a rewrite's material holds a few hundred)."""


async def story_rarity(store: Store, texts: Iterable[str]) -> Rarity:
    """Each content word of `texts` -> log(messages / messages holding it) / log(messages), 0..1."""
    words = sorted(set().union(*(content_words(text) for text in texts)))[:MAX_WORDS]
    if not words:
        return {}
    held = await store.recall.frequencies(words)
    total = max(await store.recall.message_count(), 2)
    spread = math.log(total)
    return {w: max(0.0, math.log(total / max(held.get(w, 0), 1)) / spread) for w in words}
