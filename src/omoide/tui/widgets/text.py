"""Text shown as typed, in places that would otherwise interpret it."""

from __future__ import annotations

from markdown_it import MarkdownIt
from rich.text import Text

from omoide.safe_text import as_written_markdown, safe


def plain(*cells: str) -> list[Text]:
    """DataTable reads a str cell as markup, so a title like '[OOC] notes' would
    lose its brackets (and '[/OOC]' would crash the app); Text cells are shown as
    typed, with control characters made inert."""
    return [safe(cell) for cell in cells]


def chat_markdown() -> MarkdownIt:
    """Markdown for chat text, as written: it styles but never removes a character
    (line breaks, backslashes and `<...>` included; see `as_written_markdown`)."""
    return as_written_markdown()
