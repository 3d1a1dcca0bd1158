"""World memory as plain text lines, shared by the CLI and the TUI screens.
Everything returned is rich `Text` or plain strings: model output is never markup."""

from __future__ import annotations

from rich.text import Text

from omoide.safe_text import inert as printable
from omoide.world import familiarity
from omoide.domain.world import LIST_FIELDS, SELF, Field, Item, Relationship, Update, UpdateKind, is_user, load_items

KIND_STYLE = {
    UpdateKind.FAILED: "red", UpdateKind.RETRACT: "yellow", UpdateKind.REINSTATE: "green",
    UpdateKind.KEPT: "yellow", UpdateKind.EDIT: "cyan",
}

KIND_WORDS = {
    UpdateKind.LLM: "written by the model",
    UpdateKind.RULE: "set by omoide's rules",
    UpdateKind.EDIT: "edited by you",
    UpdateKind.RETRACT: "taken back",
    UpdateKind.REINSTATE: "back again",
    UpdateKind.FAILED: "failed",
    UpdateKind.KEPT: "kept as it was",
}
"""How a change came about, in the log's words (`llm` and `rule` are the database's)."""


def about_name(key: str, names: dict[str, str]) -> str:
    if key == SELF:
        return "self"
    if is_user(key):
        return f"{key.removeprefix('user:')} (you)"
    return names.get(key, key)


def clip(text: str | None, full: bool = False, width: int = 160) -> str:
    if text is None:
        return "(none)"
    text = printable(text)
    flat = " ".join(text.split())
    return text if full else (flat if len(flat) <= width else flat[: width - 1] + "…")


EXCERPT = 600
"""Characters of a value shown without --full (then it is cut at a word, and says so)."""


def value_lines(field: Field, value: str | None, full: bool = False) -> list[str]:
    """A field's value as lines a reader can follow: a rolling list one item a
    line ('- #12 text', from the conversation that added it), text as its
    paragraphs. Wrapping is the terminal's; without `full`, a long value is cut
    at a word after EXCERPT characters."""
    if value is None:
        return ["(none)"]
    if field in LIST_FIELDS:
        try:
            items = load_items(value)
        except (ValueError, TypeError, AttributeError):
            items = None
        if items is not None:
            return [f"- {'#' + str(i.conversation_id) + ' ' if i.conversation_id else ''}{_excerpt(i.text, full)}" for i in items] or ["(empty)"]
    return [_excerpt(line, full) for line in printable(value).splitlines() if line.strip()] or ["(empty)"]


def _excerpt(text: str, full: bool) -> str:
    text = " ".join(printable(text).split())
    if full or len(text) <= EXCERPT:
        return text
    return text[:EXCERPT].rsplit(" ", 1)[0] + " … (--full shows all)"


def relationship_lines(rel: Relationship, names: dict[str, str]) -> list[tuple[str | None, str | list[Item]]]:
    """(label, value) rows for one relationship; the first has no label (the heading)."""
    heading = f"{about_name(rel.about, names)} — {rel.descriptor or 'no descriptor yet'} · familiarity {familiarity.show(rel.familiarity)}"
    return [
        (None, heading),
        ("Goal", rel.goal or "(none yet)"),
        ("Memory", rel.memory or "(nothing yet)"),
        ("Conversations", rel.pair_summaries),
        ("Heard from others", rel.offscreen),
    ]


def update_line(update: Update, names: dict[str, str]) -> Text:
    line = Text("  ")
    line.append(f"{update.step:<15}", style="bold")
    line.append(f"{printable(about_name(update.about, names)):<18}")
    line.append(f"{update.field.value:<15}")
    line.append(f"{KIND_WORDS.get(update.kind, update.kind.value):<22}", style=KIND_STYLE.get(update.kind, ""))
    source = " · ".join(x for x in (update.template, update.model) if x)
    if source:
        line.append(printable(source), style="dim")
    if update.error:
        line.append(f"  {printable(update.error)}", style=KIND_STYLE.get(update.kind, "red"))
    return line
