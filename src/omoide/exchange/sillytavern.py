"""SillyTavern chat files (JSONL): a header line, then one message per line.

A message line carries `mes` (the text shown), and optionally `swipes` (the
alternatives) with `swipe_id` (the one chosen). Importing turns swipes into
siblings in the message tree, the chosen one on the path; exporting the current
path gives each reply its siblings back as swipes, so SillyTavern opens it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from omoide.domain import Message, MessageStatus, Role
from omoide.errors import OmoideError
from omoide.store import ImportNode

MAX_CHAT_BYTES = 200 * 1024 * 1024
_DATE_FORMATS = ("%B %d, %Y %I:%M%p", "%B %d, %Y %I:%M %p", "%Y-%m-%d@%Hh%Mm%Ss", "%Y-%m-%d %H:%M:%S")


class ChatFileError(OmoideError):
    pass


@dataclass
class ParsedChat:
    user_name: str
    character_name: str
    nodes: list[ImportNode]
    head_index: int | None
    header: dict[str, Any]


def _fail(path: Path, line: int | None, problem: str) -> ChatFileError:
    where = f"{path}, line {line}" if line else str(path)
    return ChatFileError(f"Cannot import {where}: {problem}.", "Check that it is a SillyTavern chat file (.jsonl); nothing was imported.")


def parse_date(value: Any) -> str | None:
    """SillyTavern has written dates several ways over the years; None if unknown."""
    if isinstance(value, (int, float)) and value > 0:
        seconds = value / 1000 if value > 10_000_000_000 else value
        return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="microseconds")
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        parsed = None
        for fmt in _DATE_FORMATS:
            try:
                parsed = datetime.strptime(text, fmt)
                break
            except ValueError:
                continue
    if parsed is None:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.astimezone()  # SillyTavern writes local time
    return parsed.astimezone(UTC).isoformat(timespec="microseconds")


def read_chat(path: Path) -> ParsedChat:
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise _fail(path, None, f"the file cannot be read ({exc.strerror})") from exc
    if size > MAX_CHAT_BYTES:
        raise _fail(path, None, f"it is {size // 1_048_576} MiB, over the {MAX_CHAT_BYTES // 1_048_576} MiB limit")
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as exc:
        raise _fail(path, None, "it is not UTF-8 text") from exc
    records: list[tuple[int, dict[str, Any]]] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise _fail(path, number, f"invalid JSON ({exc.msg})") from exc
        if not isinstance(record, dict):
            raise _fail(path, number, "a line is not a JSON object")
        records.append((number, record))
    if not records:
        raise _fail(path, None, "the file is empty")
    header: dict[str, Any] = {}
    if "mes" not in records[0][1]:
        header = records.pop(0)[1]
    nodes: list[ImportNode] = []
    parent: int | None = None
    character_name = str(header.get("character_name") or "")
    for number, record in records:
        mes = record.get("mes")
        if not isinstance(mes, str):
            raise _fail(path, number, "'mes' is missing or not text")
        if record.get("is_system"):
            role = Role.SYSTEM
        else:
            role = Role.USER if record.get("is_user") else Role.ASSISTANT
        if role is Role.ASSISTANT and not character_name and isinstance(record.get("name"), str):
            character_name = record["name"]
        created = parse_date(record.get("send_date"))
        swipes = record.get("swipes")
        if isinstance(swipes, list) and len(swipes) > 1 and all(isinstance(s, str) for s in swipes):
            chosen = record.get("swipe_id", 0)
            if not isinstance(chosen, int) or not 0 <= chosen < len(swipes):
                raise _fail(path, number, f"'swipe_id' {chosen!r} does not point at one of the {len(swipes)} swipes")
            chosen_index = None
            for i, text in enumerate(swipes):
                content = mes if i == chosen else text
                nodes.append(ImportNode(parent, role, content, created, MessageStatus.COMPLETE))
                if i == chosen:
                    chosen_index = len(nodes) - 1
            parent = chosen_index
        else:
            nodes.append(ImportNode(parent, role, mes, created, MessageStatus.COMPLETE))
            parent = len(nodes) - 1
    return ParsedChat(
        user_name=str(header.get("user_name") or "You"),
        character_name=character_name,
        nodes=nodes,
        head_index=parent,
        header=header,
    )


def _st_date(moment: datetime) -> str:
    local = moment.astimezone()
    return f"{local:%B} {local.day}, {local:%Y} {local:%I}:{local:%M}{local:%p}".replace(" 0", " ").lower().capitalize()


def write_chat(path_messages: list[Message], swipes: dict[int, list[Message]], *, user_name: str, character_name: str,
               created: datetime) -> str:
    """The current path as SillyTavern JSONL; `swipes` maps a message id to its
    siblings (itself included) to write as swipes."""
    header = {
        "user_name": user_name,
        "character_name": character_name,
        "create_date": f"{created.astimezone():%Y-%m-%d@%Hh%Mm%Ss}",
        "chat_metadata": {"omoide": {"exported_at": datetime.now(UTC).isoformat()}},
    }
    lines = [json.dumps(header, ensure_ascii=False)]
    for message in path_messages:
        if message.role is Role.TOOL:
            continue
        record: dict[str, Any] = {
            "name": user_name if message.role is Role.USER else character_name,
            "is_user": message.role is Role.USER,
            "is_system": message.role is Role.SYSTEM,
            "send_date": _st_date(message.created_at),
            "mes": message.content,
            "extra": {},
        }
        group = swipes.get(message.id)
        if message.role is Role.ASSISTANT and group and len(group) > 1:
            record["swipes"] = [m.content for m in group]
            record["swipe_id"] = next(i for i, m in enumerate(group) if m.id == message.id)
            record["swipe_info"] = [{"send_date": _st_date(m.created_at), "extra": {}} for m in group]
        lines.append(json.dumps(record, ensure_ascii=False))
    return "\n".join(lines) + "\n"


def write_markdown(path_messages: list[Message], *, user_name: str, character_name: str, title: str) -> str:
    parts = [f"# {title}\n"]
    for message in path_messages:
        if message.role not in (Role.USER, Role.ASSISTANT):
            continue
        who = user_name if message.role is Role.USER else character_name
        mark = " *(interrupted)*" if message.status in (MessageStatus.INTERRUPTED, MessageStatus.STREAMING) else ""
        parts.append(f"**{who}** · {message.created_at.astimezone():%Y-%m-%d %H:%M}{mark}\n\n{message.content.strip()}\n")
    return "\n".join(parts)


def write_tree(messages: list[Message], *, head_id: int | None, character: str, title: str, extra: dict[str, Any]) -> str:
    """omoide's own lossless export: every message with its parent, and the head."""
    payload = {
        "format": "omoide-chat-tree",
        "version": 1,
        "character": character,
        "title": title,
        "head_id": head_id,
        "messages": [
            {
                "id": m.id, "parent_id": m.parent_id, "role": str(m.role), "content": m.content,
                "created_at": m.created_at.isoformat(), "status": str(m.status),
            }
            for m in messages
        ],
        **extra,
    }
    return json.dumps(payload, ensure_ascii=False, indent=1) + "\n"
