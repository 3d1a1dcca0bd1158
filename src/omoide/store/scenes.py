"""Group scenes: who has ever been in a chat, and the stage notes that bring a
character in or let one go.

Who is present at a head is read from the tree: the chat's opening cast, then
every stage note on the path from the root to the head, in order. So a branch
restore, a swipe or /undo to before an /invite takes the character out again.
"""

from __future__ import annotations

from collections.abc import Sequence

from omoide.domain.chat import Chat, Message, Role
from omoide.domain.witness import Attendance
from omoide.store.db import Database
from omoide.store.messages import MessageRepository
from omoide.store.world import WorldRepository

STAGES = ("invite", "leave")


class SceneRepository:
    def __init__(self, db: Database, messages: MessageRepository, world: WorldRepository) -> None:
        self.db = db
        self.messages = messages
        self.world = world

    async def add(self, chat_id: int, characters: Sequence[str], *, opening: bool = False) -> None:
        """Record characters as in the chat (a no-op for those already recorded)."""
        stamp = self.db.now_iso()
        async with self.db.write() as conn:
            for character in characters:
                await conn.execute(
                    """INSERT OR IGNORE INTO chat_participants (chat_id, character, position, opening, added_at)
                       VALUES (?, ?, (SELECT coalesce(max(position), -1) + 1 FROM chat_participants WHERE chat_id = ?), ?, ?)""",
                    (chat_id, character, chat_id, int(opening), stamp),
                )

    async def opening(self, chat: Chat) -> list[str]:
        rows = await self.db.all(
            "SELECT character FROM chat_participants WHERE chat_id = ? AND opening = 1 ORDER BY position", (chat.id,)
        )
        return [r[0] for r in rows] or [chat.character]

    async def stage_note(self, chat: Chat, parent_id: int | None, character: str, stage: str, text: str) -> Message:
        """A stage note under `parent_id`, made the head. The first invite into a
        one-on-one chat records its character as the opening cast."""
        if stage not in STAGES:
            raise ValueError(stage)
        if not chat.cast:
            await self.add(chat.id, [chat.character], opening=True)
        await self.add(chat.id, [character])
        return await self.messages.add(chat.id, parent_id, Role.SYSTEM, text, speaker=character, stage=stage)

    async def present(self, chat: Chat, head_id: int | None) -> list[str]:
        """The characters present at `head_id`, in the order they came."""
        if not chat.cast:
            return [chat.character]
        return (await self.attendance(chat, head_id)).present()

    async def attendance(self, chat: Chat, head_id: int | None) -> Attendance:
        """Who was present where on the path to `head_id`: the opening cast, then
        every stage note on the path, in order (domain/witness.py)."""
        if not chat.cast:
            return Attendance.one_on_one(chat.character)
        opening = await self.opening(chat)
        notes = await self.db.all(
            """SELECT id, depth, speaker, stage FROM messages WHERE chat_id = ? AND stage IS NOT NULL
               AND depth <= coalesce((SELECT depth FROM messages WHERE id = ?), -1) ORDER BY depth, id""",
            (chat.id, head_id),
        )
        on_path = await self.world.ends_on_path(head_id, [r[0] for r in notes])
        return Attendance.from_notes(opening, [(r[1], r[2], r[3]) for r in notes if r[0] in on_path])
