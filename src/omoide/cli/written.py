"""Rich's Markdown renderer on the as-written parser: text someone wrote (a
summary, a diary), rendered on a terminal with every character kept."""

from __future__ import annotations

from typing import Any

from rich.markdown import Markdown

from omoide.safe_text import as_written_markdown


class WrittenMarkdown(Markdown):
    """Rich's own parser has raw HTML on (`<<U>>` prints as `<>`), honours
    backslash escapes and joins single newlines; this one parses with
    `as_written_markdown` instead."""

    def __init__(self, markup: str, **options: Any) -> None:
        super().__init__(markup, **options)
        self.parsed = as_written_markdown().parse(markup)
