"""Text shown as typed, in places that would otherwise interpret it."""

from __future__ import annotations

from markdown_it import MarkdownIt
from rich.text import Text

from omoide.safe_text import safe


def plain(*cells: str) -> list[Text]:
    """DataTable reads a str cell as markup, so a title like '[OOC] notes' would
    lose its brackets (and '[/OOC]' would crash the app); Text cells are shown as
    typed, with control characters made inert."""
    return [safe(cell) for cell in cells]


_parser: MarkdownIt | None = None


def chat_markdown() -> MarkdownIt:
    """Markdown for chat text: emphasis, lists and code, but no raw HTML. With HTML
    on (the default), '<secret>' or '<b>' is a tag that the widget drops, so
    'She whispered <secret>' would lose a word. One parser for every message:
    building one costs more than parsing a chat message, and parsing keeps no
    state between calls."""
    global _parser
    if _parser is None:
        _parser = MarkdownIt("gfm-like", options_update={"html": False})
    return _parser
