"""The memo book as Markdown (`omoide memos`, the Markdown export) and as JSON
(`omoide memos --json`, the full-tree export). Highlights are model or user text:
control characters are made inert so a terminal never acts on them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from omoide.domain.chat import Memo
from omoide.safe_text import inert, markdown_literal

def when(memo: Memo) -> str:
    """The memo's date range in local time: its batch's first and last message,
    or when you wrote it."""
    if memo.first_at is None or memo.last_at is None:
        return f"{memo.created_at.astimezone():%Y-%m-%d %H:%M}"
    start, end = memo.first_at.astimezone(), memo.last_at.astimezone()
    if start.date() == end.date():
        return f"{start:%Y-%m-%d %H:%M}–{end:%H:%M}"
    return f"{start:%Y-%m-%d %H:%M} – {end:%Y-%m-%d %H:%M}"


def gap_line(memo: Memo) -> str:
    return f"no memo for messages {memo.span}: {memo.reason or 'it failed'}"


def memo_markdown(memo: Memo, *, level: str = "##") -> str:
    hidden = " · hidden" if memo.hidden else ""
    if memo.gap:
        return f"{level} {when(memo)} · {memo.span} · gap{hidden}\n\n*{inert(gap_line(memo))}*\n"
    body = "\n".join(f"- {inert(h)}" for h in memo.highlights)
    return f"{level} {when(memo)} · {memo.span} · {memo.byline}{hidden}\n\n{body}\n"


def book_markdown(memos: Sequence[Memo], *, title: str, empty: str) -> str:
    parts = [f"# {markdown_literal(title)}\n"]
    parts.extend(memo_markdown(m) for m in memos)
    if not memos:
        parts.append(f"*{empty}*\n")
    return "\n".join(parts)


def memo_json(memo: Memo) -> dict[str, Any]:
    return {
        "id": memo.id,
        "version_id": memo.version_id,
        "first_id": memo.first_id,
        "last_id": memo.anchor_id,
        "author": str(memo.author),
        "byline": memo.byline,
        "status": str(memo.status),
        "hidden": memo.hidden,
        "reason": memo.reason,
        "highlights": list(memo.highlights),
        "first_at": memo.first_at.isoformat() if memo.first_at else None,
        "last_at": memo.last_at.isoformat() if memo.last_at else None,
        "created_at": memo.created_at.isoformat(),
        "updated_at": memo.updated_at.isoformat(),
    }
