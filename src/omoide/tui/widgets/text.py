"""Plain text for places that would otherwise read Textual markup."""

from __future__ import annotations

from rich.text import Text


def plain(*cells: str) -> list[Text]:
    """DataTable reads a str cell as markup, so a title like '[OOC] notes' would
    lose its brackets; Text cells are shown as typed."""
    return [Text(cell) for cell in cells]
