"""Storage: one aiosqlite connection, WAL, named migrations, a message tree.

`Store` owns the connection and hands out one repository per concern, all over
the same `Database`: `chats`, `messages` (the tree and its paths), `memory`
(summaries and diary entries anchored to the tree), `branches`, `memos`
(the memo book), `mentions` (memories brought up again, anchored to the tree),
`profile` (the user profile), `recall` (full-text search for the recall tool)
`exchange` (what imported chat files carry beyond omoide's columns) and `world`
(world memory: versioned values and their update log, across chats) and `scenes`
(who is in a group scene, and the stage notes that change it) and `lore`
(when lore entries with timed effects fired, anchored to the tree) and `pins`
(facts pinned to a character's every prompt) and `vectors` (messages' static vectors). Features
that add tables add a repository here.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from omoide import locations
from omoide.store.branches import BranchRepository
from omoide.store.chats import ChatRepository
from omoide.store.connection import open_connection
from omoide.store.db import Database
from omoide.store.exchange import ExchangeRepository
from omoide.store.lore import LoreRepository
from omoide.store.memory import MemoryRepository
from omoide.store.memos import MemoHit, MemoRepository
from omoide.store.mentions import MentionRepository
from omoide.store.pins import PinRepository
from omoide.store.messages import ImportNode, MessageRepository, SearchHit
from omoide.store.profile import ProfileRepository
from omoide.store.recall import RecallRepository
from omoide.store.scenes import SceneRepository
from omoide.store.vectors import VectorRepository
from omoide.store.world import WorldRepository


class Store:
    def __init__(self, db: Database) -> None:
        self.db = db
        self.chats = ChatRepository(db)
        self.messages = MessageRepository(db)
        self.memory = MemoryRepository(db, self.messages)
        self.branches = BranchRepository(db)
        self.memos = MemoRepository(db)
        self.mentions = MentionRepository(db)
        self.profile = ProfileRepository(db)
        self.recall = RecallRepository(db)
        self.exchange = ExchangeRepository(db)
        self.world = WorldRepository(db)
        self.scenes = SceneRepository(db, self.messages, self.world)
        self.lore = LoreRepository(db)
        self.pins = PinRepository(db)
        self.vectors = VectorRepository(db)

    @classmethod
    async def open(cls, path: Path | None = None, *, synchronous: str = "NORMAL") -> Store:
        path = path or locations.database_file()
        conn = await open_connection(path, synchronous=synchronous)
        return cls(Database(conn, path))

    @property
    def path(self) -> Path:
        return self.db.path

    @property
    def clock(self) -> Callable[[], datetime]:
        """What every row written now is stamped with (the wall clock unless set)."""
        return self.db.clock

    @clock.setter
    def clock(self, clock: Callable[[], datetime]) -> None:
        self.db.clock = clock

    async def close(self) -> None:
        await self.db.conn.close()

    async def __aenter__(self) -> Store:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


__all__ = ["ImportNode", "MemoHit", "SearchHit", "Store"]
