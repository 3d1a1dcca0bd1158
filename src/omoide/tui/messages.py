"""Messages the TUI posts to itself: results of background work, in order."""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message

from omoide.chat.events import TurnEvent
from omoide.memory.events import MemoryEvent


@dataclass
class TurnUpdate(Message):
    event: TurnEvent


@dataclass
class MemoryUpdate(Message):
    event: MemoryEvent


class ComposerReady(Message):
    """The composer has the focus: keys typed before this go to it now."""
