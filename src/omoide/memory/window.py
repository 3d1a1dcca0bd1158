"""Tier 1: the recent messages, verbatim and timestamped (`omoide.llm.stamps`)."""

from __future__ import annotations

from collections.abc import Mapping

from omoide.domain.chat import Message, Role


def speaker_label(message: Message, name: str, user: str, names: Mapping[str, str] | None = None) -> str:
    """Who wrote `message`, for a summary or memo request: the user, or in a group
    scene the character stored on it (`names`: id -> name), else `name`."""
    if message.role is Role.USER:
        return user
    return (names or {}).get(message.speaker or "", name)
