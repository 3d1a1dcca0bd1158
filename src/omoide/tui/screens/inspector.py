"""The prompt inspector: the last prompt, layer by layer."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static

from omoide.llm.base import ESTIMATE
from omoide.memory.prompt.model import AssembledPrompt
from omoide.safe_text import inert
from omoide.tui.widgets import diary
from omoide.tui.widgets.text import plain

DESCRIPTIONS = {
    "card": "rules, persona, character card, constant lore (stable)",
    "profile": "your profile, known to every character (stable)",
    "world": "what the character carries from past conversations (stable until one ends)",
    "pinned": "facts pinned to the character with /pin, in its every prompt (stable until a pin changes)",
    "memory": "diary, and the summary if not in the window (stable)",
    "memos": "the memo book's newest pages before the window (changes when a memo is added or rolls off)",
    "authors_note": "the chat's Author's Note (SillyTavern), where its position puts it",
    "window": "recent messages verbatim, summary parts where written",
    "character_note": "the card's Character's Note, at its depth in the window",
    "lore_at_depth": "lore placed at a depth of the window (SillyTavern's @ D)",
    "passages": "memories that come to mind: earlier messages relevant to the latest, word for word (volatile)",
    "tail": "date and time, new diary lines, triggered lore (volatile)",
}


def count_note(prompt: AssembledPrompt) -> str:
    """How the tokens were counted, in words."""
    if prompt.count_method == ESTIMATE or not prompt.count_method:
        return "estimated from the text's length, 4 characters a token"
    return f"{'exact' if prompt.exact else 'estimated'}: {prompt.count_method}"


def inspector_text(prompt: AssembledPrompt | None) -> str:
    if prompt is None:
        return "No prompt yet: send a message first."
    lines = [
        f"Total: {prompt.total_tokens} tokens"
        + (f" of a {prompt.budget}-token budget" if prompt.budget else "")
        + f"  ({count_note(prompt)})"
    ]
    if prompt.shared_tokens is not None and prompt.total_tokens:
        share = prompt.shared_tokens / prompt.total_tokens
        lines.append(f"Shared with the previous turn's prompt: about {prompt.shared_tokens} tokens ({share:.0%}), reusable from a prompt cache.")
    else:
        lines.append("Shared with the previous turn's prompt: nothing to compare yet (the first prompt since opening the chat).")
    if prompt.usage is not None and prompt.usage.prompt_tokens is not None:
        usage = prompt.usage
        cache = ""
        if usage.cache_read_tokens is not None or usage.cache_write_tokens is not None:
            cache = f", {usage.cache_read_tokens or 0} read from its prompt cache, {usage.cache_write_tokens or 0} written to it"
        lines.append(f"The backend reported {usage.prompt_tokens} prompt tokens{cache}.")
    lines.append("Dropped to fit: " + ("; ".join(prompt.dropped) if prompt.dropped else "nothing"))
    lines.append("Lore that fired: " + ("; ".join(prompt.lore) if prompt.lore else "none"))
    if prompt.speaker:
        lines.append("Speaker: " + prompt.speaker)
    if prompt.gossip:
        lines.append(f"Gossip target of this conversation: {prompt.gossip} (gossip_rate; in the world layer)")
    if prompt.tool_problems:
        lines.append("Tool calls that failed or were cut: " + "; ".join(prompt.tool_problems))
    if prompt.memories:
        lines.append("Memories in the prompt, with their strength (importance, decayed by age, raised by mentions):")
        lines += [f"  {'?' if value is None else f'{value:.2f}'}  {diary.day(when)} {' '.join(text.split())[:76]}"
                  for when, text, value in prompt.memories]
    if prompt.passages:
        lines.append("Memories that came to mind, with why (score: relevance x (0.5 + 0.3 importance + 0.2 recency); anyone's words alike):")
        lines += [f"  {line}" for line in prompt.passages]
    if prompt.recalled:
        lines.append("Recalled for this reply:")
        lines += [f"  {line}" for line in prompt.recalled]
    return "\n".join(lines)


class InspectorScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    InspectorScreen { align: center middle; }
    InspectorScreen > VerticalScroll { width: 95%; height: 90%; border: round $accent; background: $surface; padding: 1 2; }
    InspectorScreen DataTable { height: auto; margin: 1 0; }
    InspectorScreen .layer-title { text-style: bold; margin-top: 1; }
    InspectorScreen .layer-text { color: $text-muted; }
    """
    # The screen's, before its table's own: the table is as tall as its rows, so
    # paging it moved nothing while the layers' text below stayed out of reach.
    BINDINGS = [
        Binding("escape,q", "close", "Close", id="inspector.close"),
        Binding("pageup", "scroll_layers('page_up')", "Page up", id="inspector.page_up", show=False, priority=True),
        Binding("pagedown", "scroll_layers('page_down')", "Page down", id="inspector.page_down", show=False, priority=True),
        Binding("home,ctrl+home", "scroll_layers('scroll_home')", "Top", id="inspector.top", show=False, priority=True),
        Binding("end,ctrl+end", "scroll_layers('scroll_end')", "Bottom", id="inspector.bottom", show=False, priority=True),
    ]

    def __init__(self, prompt: AssembledPrompt | None) -> None:
        super().__init__()
        self.prompt = prompt

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static("Prompt inspector", classes="layer-title")
            yield Static(inert(inspector_text(self.prompt)), id="inspector-summary", markup=False)
            table: DataTable[str] = DataTable(id="layers", cursor_type="row")
            yield table
            if self.prompt is not None:
                for layer in self.prompt.layers:
                    yield Static(f"── {layer.name} ({layer.tokens} tokens) ──", classes="layer-title", markup=False)
                    yield Static(inert(layer.text) or "(empty)", classes="layer-text", markup=False)

    def on_mount(self) -> None:
        table = self.query_one("#layers", DataTable)
        table.add_columns("layer", "tokens", "messages", "what it holds")
        if self.prompt is not None:
            for layer in self.prompt.layers:
                table.add_row(*plain(layer.name, str(layer.tokens), str(layer.messages), DESCRIPTIONS.get(layer.name, "")))

    def action_scroll_layers(self, how: str) -> None:
        getattr(self.query_one(VerticalScroll), f"action_{how}")()

    def action_close(self) -> None:
        self.dismiss(None)
