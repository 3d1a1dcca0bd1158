"""The diary pane: the character's diary at the current head, live."""

from __future__ import annotations

from datetime import datetime

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Markdown, Static

from omoide.domain.chat import DiaryAuthor, DiaryEntry
from omoide.safe_text import inert
from omoide.tui.widgets.text import chat_markdown


def day(moment: datetime) -> str:
    """A diary entry's local date (snapshot tests pin it)."""
    return f"{moment.astimezone():%m/%d}"


def weight(entry: DiaryEntry) -> str:
    """' · ★★★★☆ joy' for an entry with an importance (older entries have none)."""
    if entry.importance is None:
        return ""
    stars = "★" * entry.importance + "☆" * (5 - entry.importance)
    return f" · {stars}" + (f" *{entry.emotion}*" if entry.emotion else "")


def diary_markdown(entries: list[DiaryEntry], name: str) -> str:
    if not entries:
        return inert(f"*{name} has not written anything yet.*")
    parts = []
    for entry in entries:
        who = {DiaryAuthor.USER: " ✎ *(written by you)*", DiaryAuthor.COMPRESSION: " *(compressed)*"}.get(entry.author, "")
        parts.append(f"**{day(entry.created_at)}**{who}{weight(entry)}\n\n{entry.content.strip()}")
    return inert("\n\n---\n\n".join(parts))


class DiaryPane(VerticalScroll):
    DEFAULT_CSS = """
    DiaryPane { width: 38; border-left: solid $accent; padding: 0 1; display: none; }
    DiaryPane.visible { display: block; }
    DiaryPane .title { text-style: bold; margin-bottom: 1; }
    """

    def __init__(self, name: str) -> None:
        super().__init__(id="diary")
        self.character_name = name

    def compose(self) -> ComposeResult:
        yield Static(inert(f"{self.character_name}'s diary"), classes="title", markup=False)
        yield Markdown(diary_markdown([], self.character_name), parser_factory=chat_markdown)

    def show_owner(self, name: str) -> None:
        """Another character's diary is shown from now on (the chat changed)."""
        self.character_name = name
        self.query_one(".title", Static).update(inert(f"{name}'s diary"))

    async def show_entries(self, entries: list[DiaryEntry]) -> None:
        await self.query_one(Markdown).update(diary_markdown(entries, self.character_name))
        self.scroll_end(animate=False)
