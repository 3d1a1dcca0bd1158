"""Memory kept in the story's own words, with no model call: what a summary,
memo or diary compression is when the model cannot write one (it failed again
and again, or wrote badly) and, with memory_writer 'extract' ('auto' on the
embedded models, whose summaries invent what nobody said), always.

The choosing is the extractive writer's (memory/extract.py): the sentences
that carry names, numbers, dates and places, what lasts before passing detail.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from omoide.config.sections import MemorySettings
from omoide.domain.chat import DiaryEntry, Message
from omoide.llm.stamps import stamp
from omoide.memory.extract import Rarity, fallback_summary
from omoide.memory.weights import DEFAULT_IMPORTANCE
from omoide.memory.summary import Compression, quoted

CHARS_PER_TOKEN = 4


def own_words(settings: MemorySettings, backend: object) -> bool:
    """Whether memory work keeps the story's own words instead of asking `backend`:
    memory_writer 'extract', or 'auto' on a backend whose summaries cannot be
    trusted (it says `summarizes = False`: the embedded models)."""
    if settings.writer == "auto":
        return not getattr(backend, "summarizes", True)
    return settings.writer == "extract"


def own_words_summary(compression: Compression, chunk: Sequence[Message], settings: MemorySettings, *, name: str,
                      user: str, names: Mapping[str, str] | None = None, rare: Rarity | None = None,
                      context_size: int = 0) -> str:
    """The summary text after folding in `chunk`, in the story's own words: a
    part of its sentences that tell most, or, on a rewrite, a choice from the
    old summary and the new words together (its facts weigh as theirs do), so
    it stays bounded (appended to at every rewrite, it would outgrow the context).
    It may be as long as the model's answer may (`Compression.max_tokens`): a
    part about its messages' size, a rewrite its share of the context, within three
    quarters of the length it is rewritten at (`MemorySettings.merge_chars`)."""
    lines = quoted(chunk, name, user, names)
    budget = CHARS_PER_TOKEN * compression.max_tokens(chunk)
    if compression.rewrite:
        budget = min(budget, 3 * settings.merge_chars(context_size) // 4 or budget)
        lines = [*compression.summary.splitlines(), *lines]
    own = fallback_summary(lines, user=user, character=name, budget_chars=budget, rare=rare)
    return compression.text(compression.dated(own, chunk))


def own_words_diary(entries: Sequence[DiaryEntry], max_lines: int) -> str:
    """A compressed diary that is its own lines: the most important ones (the
    newest first among equals) up to `max_lines`, each dated, in the order written."""
    lines = [(entry, n, line.strip()) for entry in entries for n, line in enumerate(entry.content.splitlines()) if line.strip()]
    chosen = sorted(lines, key=lambda t: (-(t[0].importance or DEFAULT_IMPORTANCE), -t[0].created_at.timestamp(), -t[1]))
    kept = sorted(chosen[:max(max_lines, 1)], key=lambda t: (t[0].created_at, t[0].id, t[1]))
    # A compressed block's lines are dated already.
    return "\n".join(line if entry.compressed else f"{stamp(entry.created_at)} {line.lstrip('-* ')}" for entry, _, line in kept)
