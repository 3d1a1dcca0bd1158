"""Moving on a chat's message tree: swipes, /undo and branches. Every move
changes only the head (nothing is copied or deleted), and the world keeper
follows it, so a conversation left behind on another branch is retracted.
A move that leaves a path no swipe reaches (/undo, /edit, a restore) first
saves the head as an automatic branch, auto-<time>, so it can be reopened."""

from __future__ import annotations

import re
from datetime import datetime

from omoide.chat.state import ChatState
from omoide.domain.chat import Branch, Message, Role
from omoide.errors import CommandError, NotFound, StoreError
from omoide.world.keeper import WorldKeeper

BRANCH_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,63}$")


class ChatTree:
    def __init__(self, state: ChatState, world: WorldKeeper) -> None:
        self.state = state
        self.store = state.store
        self.world = world

    async def _move(self, message_id: int) -> None:
        chat = await self.state.move_head(message_id)
        await self.world.follow_head(chat.id)

    async def swipes(self) -> tuple[list[Message], int]:
        """The alternatives of the last reply, and which one is on the path."""
        head = await self.state.head()
        if head is None:
            return [], 0
        group = await self.store.messages.siblings(head)
        return group, next(i for i, m in enumerate(group) if m.id == head.id)

    async def select_swipe(self, step: int) -> Message | None:
        group, index = await self.swipes()
        if len(group) < 2:
            return None
        chosen = group[(index + step) % len(group)]
        await self._move(chosen.id)
        return chosen

    async def undo(self) -> tuple[Message, Branch]:
        """Step the head back one exchange (to before your last message), saving
        the path left as an automatic branch (returned) so /branch restore reopens it."""
        head = await self.state.head()
        if head is None or head.parent_id is None:
            raise CommandError("There is nothing to undo.", "/undo steps back one exchange; the chat is at its first message.")
        target = await self.store.messages.get(head.parent_id)
        if head.role is Role.ASSISTANT and target.role is Role.USER and target.parent_id is not None:
            target = await self.store.messages.get(target.parent_id)
        kept = await self.keep_head(head.id)
        await self._move(target.id)
        return target, kept

    async def keep_head(self, message_id: int) -> Branch:
        """Save `message_id` (the head about to be left) as a new automatic branch."""
        name = await self._auto_name()
        return await self.store.branches.save(self.state.chat_id, name, message_id, auto=True)

    async def _auto_name(self) -> str:
        """auto-<time>, with -2, -3 ... when that second already has one (two quick undos)."""
        base = f"auto-{datetime.now():%Y%m%d-%H%M%S}"
        taken = {b.name for b in await self.branches()}
        name, n = base, 1
        while name in taken:
            n += 1
            name = f"{base}-{n}"
        return name

    @staticmethod
    def validate_branch_name(name: str) -> str:
        name = name.strip()
        if not BRANCH_NAME.match(name):
            raise CommandError(
                f"'{name}' is not a valid branch name.",
                "Use 1-64 letters, digits, '-', '_' or '.', starting with a letter or digit.",
            )
        return name

    async def save_branch(self, name: str, *, force: bool = False) -> Branch:
        name = self.validate_branch_name(name)
        chat = await self.state.refresh()
        if chat.head_id is None:
            raise CommandError("The chat is empty; there is nothing to save.", "Send a message first, then /branch save NAME.")
        try:
            return await self.store.branches.save(chat.id, name, chat.head_id, force=force)
        except StoreError as exc:
            if isinstance(exc, NotFound):
                raise
            raise CommandError(exc.message, exc.hint) from exc

    async def restore_branch(self, name: str) -> tuple[Branch, Branch | None]:
        """Move the head to `name`, saving the current head first as auto-<time>."""
        name = self.validate_branch_name(name)
        autosave = await self._auto_name()
        target, saved = await self.store.branches.restore(self.state.chat_id, name, autosave_name=autosave)
        chat = await self.state.refresh()
        self.state.own_head = chat.head_id
        await self.world.follow_head(chat.id)
        return target, saved

    async def branches(self) -> list[Branch]:
        return await self.store.branches.list(self.state.chat_id)

    async def delete_branch(self, name: str) -> None:
        if not await self.store.branches.delete(self.state.chat_id, name):
            names = ", ".join(b.name for b in await self.branches()) or "none yet"
            raise NotFound(f"There is no branch named '{name}'.", f"Branches in this chat: {names}.")
