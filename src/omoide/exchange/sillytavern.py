"""SillyTavern chat files (JSONL): a header line, then one message per line.

A message line carries `mes` (the text shown), and optionally `swipes` (the
alternatives) with `swipe_id` (the one chosen). Importing turns swipes into
siblings in the message tree, the chosen one on the path; exporting the current
path gives each reply its siblings back as swipes, so SillyTavern opens it.

Dates are read in every form SillyTavern writes or accepts (its own
`2024-6-5 @14h 56m 50s 682ms`, the older `June 5, 2024 2:56pm`, ISO 8601,
epoch milliseconds) and written in its own form, to the millisecond. System and
narrator messages (`is_system`, an `extra.type` of `narrator`, the name
`System`) stay system messages; a hidden message of yours stays yours
(`is_user` kept beside `is_system`). A group chat names each character's
message (`name`): those names are the speakers of `ParsedChat.speakers`. What omoide has no column for (the header's
`chat_metadata` and `create_date`, each message's `name`, `extra` and other
fields) is kept beside the chat and given back on export.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from collections.abc import Mapping
from typing import Any

from omoide import locations
from omoide.domain.chat import Message, MessageStatus, Role
from omoide.errors import OmoideError
from omoide.safe_text import json_text
from omoide.safe_text import markdown_literal
from omoide.store import ImportNode

MAX_CHAT_BYTES = 200 * 1024 * 1024
_DATE_FORMATS = ("%B %d, %Y %I:%M%p", "%B %d, %Y %I:%M %p", "%b %d, %Y %I:%M%p", "%b %d, %Y %I:%M %p", "%Y-%m-%d %H:%M:%S")
# SillyTavern's own: messages `2024-6-5 @14h 56m 50s 682ms`, chat files `2024-6-5@14h56m50s`.
_ST_DATE = re.compile(r"^(\d{4})-(\d{1,2})-(\d{1,2})\s*@\s*(\d{1,2})h\s*(\d{1,2})m\s*(\d{1,2})s(?:\s*(\d{1,3})\s*ms)?$")
_OWN_KEYS = ("mes", "swipes", "swipe_id", "swipe_info", "is_user", "send_date")
"""Message fields omoide stores in its own columns; every other field is kept as is."""


class ChatFileError(OmoideError):
    pass


@dataclass
class ParsedChat:
    user_name: str
    character_name: str
    nodes: list[ImportNode]
    head_index: int | None
    header: dict[str, Any]
    meta: list[dict[str, Any]] = field(default_factory=list)
    """Per node, the fields of its line omoide has no column for (name, is_system, extra ...)."""
    names: list[str | None] = field(default_factory=list)
    """Per node, the name a character's message was written under (None for yours and system ones)."""
    has_header: bool = True
    """False for a file that starts with a message (SillyTavern's older group chats)."""

    @property
    def speakers(self) -> list[str]:
        """The characters who speak, in the order they first do (the header's
        `character_name` for a chat where no character has spoken yet)."""
        found = list(dict.fromkeys(n for n in self.names if n))
        return found or ([self.character_name] if self.character_name else [])


def _fail(path: Path, line: int | None, problem: str) -> ChatFileError:
    where = f"{path}, line {line}" if line else str(path)
    return ChatFileError(f"Cannot import {where}: {problem}.", "Check that it is a SillyTavern chat file (.jsonl); nothing was imported.")


class ImpossibleDate(ValueError):
    """A date in a form SillyTavern writes, but out of every calendar's range (year 0, year 300,000)."""


EARLIEST_YEAR, LATEST_YEAR = 2, 9998
"""Dates are kept within these years, so that showing one in any time zone stays a date."""


def parse_date(value: Any) -> str | None:
    """SillyTavern has written dates several ways over the years; None if
    unknown, ImpossibleDate if it is out of range."""
    try:
        parsed = _parse_date(value)
    except (ValueError, OverflowError, OSError) as exc:
        raise ImpossibleDate(str(exc)) from exc
    if parsed is not None and not EARLIEST_YEAR <= datetime.fromisoformat(parsed).year <= LATEST_YEAR:
        raise ImpossibleDate(f"the year {datetime.fromisoformat(parsed).year}")
    return parsed


def _date(value: Any, path: Path, line: int) -> str | None:
    try:
        return parse_date(value)
    except ImpossibleDate as exc:
        shown = repr(value) if len(repr(value)) <= 60 else repr(value)[:59] + "…"
        raise _fail(path, line, f"the date {shown} is out of range ({exc}); omoide keeps dates from the year "
                                f"{EARLIEST_YEAR} to {LATEST_YEAR}") from None


def _parse_date(value: Any) -> str | None:
    if isinstance(value, (int, float)) and value > 0:
        seconds = value / 1000 if value > 10_000_000_000 else value
        return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="microseconds")
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    own = _ST_DATE.match(text)
    if own:
        y, mo, d, h, mi, sec, ms = own.groups()
        try:
            local = datetime(int(y), int(mo), int(d), int(h), int(mi), int(sec), int((ms or "0").ljust(3, "0")) * 1000)
        except ValueError:
            return None
        return local.astimezone().astimezone(UTC).isoformat(timespec="microseconds")  # SillyTavern writes local time
    if text.isdigit():
        return _parse_date(int(text))
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
        lines = locations.read_regular(path, MAX_CHAT_BYTES).decode("utf-8").splitlines()
    except (locations.NotAFile, locations.FileTooLarge) as exc:
        raise _fail(path, None, str(exc.strerror)) from exc
    except OSError as exc:
        raise _fail(path, None, f"the file cannot be read ({exc.strerror})") from exc
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
    meta: list[dict[str, Any]] = []
    names: list[str | None] = []
    parent: int | None = None
    character_name = str(header.get("character_name") or "")
    for number, record in records:
        mes = record.get("mes")
        if not isinstance(mes, str):
            raise _fail(path, number, "'mes' is missing or not text")
        if _is_system(record):
            role = Role.SYSTEM
        else:
            role = Role.USER if record.get("is_user") else Role.ASSISTANT
        if role is Role.ASSISTANT and not character_name and isinstance(record.get("name"), str):
            character_name = record["name"]
        created = _date(record.get("send_date"), path, number)
        kept = {k: v for k, v in record.items() if k not in _OWN_KEYS}
        if role is Role.SYSTEM and record.get("is_user") is True:
            kept["is_user"] = True  # a message of yours hidden from the prompt: written back as yours
        raw_name = record.get("name")
        name = raw_name.strip() if role is Role.ASSISTANT and isinstance(raw_name, str) else None
        if isinstance(record.get("send_date"), str | int | float):
            kept["send_date"] = record["send_date"]  # written back as it was
        swipes = record.get("swipes")
        if isinstance(swipes, list) and len(swipes) > 1 and all(isinstance(s, str) for s in swipes):
            chosen = record.get("swipe_id", 0)
            if not isinstance(chosen, int) or not 0 <= chosen < len(swipes):
                raise _fail(path, number, f"'swipe_id' {chosen!r} does not point at one of the {len(swipes)} swipes")
            chosen_index = None
            raw_infos = record.get("swipe_info")
            infos: list[Any] = raw_infos if isinstance(raw_infos, list) else []
            for i, text in enumerate(swipes):
                content = mes if i == chosen else text
                info = infos[i] if i < len(infos) and isinstance(infos[i], dict) else {}
                when = created if i == chosen else _date(info.get("send_date"), path, number) or created
                nodes.append(ImportNode(parent, role, content, when, MessageStatus.COMPLETE))
                meta.append({**kept, "swipe_info": info} if info else kept)
                names.append(name or None)
                if i == chosen:
                    chosen_index = len(nodes) - 1
            parent = chosen_index
        else:
            nodes.append(ImportNode(parent, role, mes, created, MessageStatus.COMPLETE))
            meta.append(kept)
            names.append(name or None)
            parent = len(nodes) - 1
    return ParsedChat(
        user_name=str(header.get("user_name") or "You"),
        character_name=character_name,
        nodes=nodes,
        head_index=parent,
        header=header,
        meta=meta,
        names=names,
        has_header=bool(header),
    )


def _is_system(record: dict[str, Any]) -> bool:
    """SillyTavern's system and narrator messages: `is_system`, a narrator or
    comment `extra.type`, or a message from `System` that is not the user's."""
    if record.get("is_system") is True:
        return True
    extra = record.get("extra")
    if isinstance(extra, dict) and extra.get("type") in ("narrator", "comment", "assistant_note"):
        return True
    name = record.get("name")
    return not record.get("is_user") and isinstance(name, str) and name.strip().casefold() == "system"


def st_date(moment: datetime) -> str:
    """SillyTavern's message date, in local time, to the millisecond: `2024-6-5 @14h 56m 50s 682ms`."""
    t = moment.astimezone()
    return f"{t.year}-{t.month}-{t.day} @{t.hour}h {t.minute}m {t.second}s {t.microsecond // 1000}ms"


def st_file_date(moment: datetime) -> str:
    """SillyTavern's chat `create_date`, every part zero-padded: `2026-11-24@23h02m17s`
    (RossAscends-mods.js humanizedDateTime)."""
    t = moment.astimezone()
    return f"{t.year:04d}-{t.month:02d}-{t.day:02d}@{t.hour:02d}h{t.minute:02d}m{t.second:02d}s"


def speaker_name(message: Message, user_name: str, character_name: str, names: Mapping[str, str] | None) -> str:
    """The name a message is written under: the user's, or in a group scene its
    speaker's (`names`: character id -> name), else the chat's character's."""
    if message.role is Role.USER:
        return user_name
    return (names or {}).get(message.speaker or "", character_name)


def write_chat(path_messages: list[Message], swipes: dict[int, list[Message]], *, user_name: str, character_name: str,
               created: datetime, chat_meta: dict[str, Any] | None = None, meta: dict[int, dict[str, Any]] | None = None,
               names: Mapping[str, str] | None = None) -> str:
    """The current path as SillyTavern JSONL; `swipes` maps a message id to its
    siblings (itself included) to write as swipes. `chat_meta` and `meta` are what
    an import kept (the header; each message's other fields), given back as they were."""
    kept_header = dict(chat_meta or {})
    raw_metadata = kept_header.get("chat_metadata")
    metadata: dict[str, Any] = raw_metadata if isinstance(raw_metadata, dict) else {}
    header = {
        **kept_header,
        "user_name": user_name,
        "character_name": character_name,
        "create_date": kept_header.get("create_date") or st_file_date(created),
        "chat_metadata": {**metadata, "omoide": {"exported_at": datetime.now(UTC).isoformat()}},
    }
    meta = meta or {}
    # A group chat that came without a header goes back without one (SillyTavern's group files).
    lines = [] if header.pop("header", True) is False else [json_text(header)]
    for message in path_messages:
        if message.role is Role.TOOL:
            continue
        kept = meta.get(message.id, {})
        system = message.role is Role.SYSTEM
        record: dict[str, Any] = {
            "name": speaker_name(message, user_name, character_name, names),
            "is_user": message.role is Role.USER or (system and kept.get("is_user") is True),
            "is_system": bool(kept.get("is_system")) if system else False,
            "send_date": kept.get("send_date") or st_date(message.created_at),
            "mes": message.content,
            "extra": {},
        }
        record.update({k: v for k, v in kept.items() if k not in _OWN_KEYS})
        if system and not kept:
            record.update(name="System", is_system=True)
        record["mes"] = message.content
        group = swipes.get(message.id)
        if message.role is Role.ASSISTANT and group and len(group) > 1:
            record["swipes"] = [m.content for m in group]
            record["swipe_id"] = next(i for i, m in enumerate(group) if m.id == message.id)
            record["swipe_info"] = [
                {"send_date": st_date(m.created_at), "extra": {}, **meta.get(m.id, {}).get("swipe_info", {})} for m in group
            ]
        lines.append(json_text(record))
    return "\n".join(lines) + "\n"


def write_markdown(path_messages: list[Message], *, user_name: str, character_name: str, title: str,
                   meta: dict[int, dict[str, Any]] | None = None, names: Mapping[str, str] | None = None) -> str:
    """The current path as Markdown, to the second; system and narrator messages
    appear under their own name, in italics."""
    parts = [f"# {markdown_literal(title)}\n"]
    for message in path_messages:
        if message.role not in (Role.USER, Role.ASSISTANT, Role.SYSTEM):
            continue
        when = f"{message.created_at.astimezone():%Y-%m-%d %H:%M:%S}"
        name = (meta or {}).get(message.id, {}).get("name")
        kept = name.strip() if isinstance(name, str) and name.strip() else ""  # as the chat file named the speaker
        if message.role is Role.SYSTEM:
            parts.append(f"**{markdown_literal(kept or 'System')}** · {when}\n\n*{message.content.strip()}*\n")
            continue
        who = kept or speaker_name(message, user_name, character_name, names)
        mark = " *(interrupted)*" if message.status in (MessageStatus.INTERRUPTED, MessageStatus.STREAMING) else ""
        parts.append(f"**{markdown_literal(who)}** · {when}{mark}\n\n{message.content.strip()}\n")
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
                **({"speaker": m.speaker} if m.speaker else {}), **({"stage": m.stage} if m.stage else {}),
            }
            for m in messages
        ],
        **extra,
    }
    return json_text(payload, indent=1) + "\n"
